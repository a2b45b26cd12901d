"""sql.copy.copy_statement."""
