"""sql.execution."""
