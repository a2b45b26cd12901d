"""sql.dml.writes."""
