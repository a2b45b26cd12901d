"""sql.pg_catalog.catalog_rows."""
