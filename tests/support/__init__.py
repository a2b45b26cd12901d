"""Helpers shared by the test suites: server processes and real clients.

``servers`` starts a nyala server process and a throwaway PostgreSQL 15 to
compare it with (``server_fork`` forks the nyala servers from one process that
has imported the server); ``psql`` runs the real psql against either.  The e2e
fixtures in ``tests/e2e/conftest.py`` are thin wrappers around them.
"""
