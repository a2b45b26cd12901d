"""sql.frontend: SQL text to typed statements, by the nyala sqlglot dialect."""
