"""sql.frontend."""
