"""COPY: its statement and options, and COPY FROM STDIN's stream into the table.

- ``copy_statement``: what a COPY runs: COPY TO's query, the table, FORCE_QUOTE's check
  (the statement is parsed by ``sql.frontend.copy_grammar``).
- ``copy_from``: ``CopyIn``, the sink server/ feeds CopyData into; rows go in batches
  through the write path.  ``binary_format``: COPY's binary format, decoded with numpy.
  ``arrow_format``: an Arrow IPC stream cut into whole record batches.  ``bytea_input``:
  bytea's text forms in text and CSV input.
COPY TO runs its query like any other; server/copy_protocol.py formats the rows.
"""
