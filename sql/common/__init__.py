"""sql.common."""
