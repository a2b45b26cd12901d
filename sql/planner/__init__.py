"""sql.planner."""
