"""COPY: its statement and options, and COPY FROM STDIN's stream into the table.

- ``copy_statement``: target, direction, options in both PostgreSQL syntaxes.
- ``copy_from``: ``CopyIn``, the sink server/ feeds CopyData into; rows go in batches
  through the write path.  ``binary_format``: COPY's binary format, decoded with numpy.
COPY TO runs its query like any other; server/copy_protocol.py formats the rows.
"""
