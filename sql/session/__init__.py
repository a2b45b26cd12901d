"""sql.session.session."""
