"""sql.ddl.tables."""
