"""SQL text in, Arrow batches out: sessions, planning, and execution on DuckDB over tablet scans.

Follow a SELECT:

1. ``session.Session.execute`` (simple Query) or ``prepare`` + ``execute_prepared``
   (extended protocol) receives the text.  ``parser`` tokenizes it once with
   the ``nyala`` sqlglot dialect (``dialect``) and splits it at top-level
   semicolons, so every error position points into the whole query string.
2. The dialect's parser reads every statement into a typed statement
   (``frontend.statements``): sqlglot's own trees for queries, writes and DDL,
   and nodes of nyala's grammar modules for transaction control, SET/SHOW/RESET
   (``frontend.utility``), cursors, COMMENT ON, COPY, roles and EXPLAIN.  The
   session plans each kind into its own plan class (``session.plan``) and
   runs utility statements itself (``settings`` holds the values).
3. ``binder`` resolves tables against the catalog (42P01), qualifies and
   type-annotates the statement with sqlglot (42703 for unknown columns),
   works out which columns each table reference reads, and infers the type of
   every ``$n`` the client left untyped.
4. ``transpile`` rewrites the bound tree so DuckDB computes what PostgreSQL
   would (integer division, division by zero, ``sum`` types, bytea literals,
   ``now()``, ``version()``) and names output columns as PostgreSQL does.
5. ``pushdown`` builds one ``ScanPlan`` per table reference from the WHERE
   (and JOIN ... ON) conjuncts: predicates, projection, a LIMIT; parameters
   are read at run time, and ``catalog.pruner`` picks the tablets.
6. ``query.compile_query`` keeps the DuckDB SQL; ``query.QueryRunner.run``
   registers one ``executor.ScanSource`` per table reference on a DuckDB
   cursor.  Each time DuckDB opens a source it starts a tablet scan at the
   statement's snapshot, so rows stream from storage through DuckDB to the
   server as Arrow record batches; ``datatypes`` maps the result columns to
   PostgreSQL type OIDs.  A query the scan answers alone (plain columns, the
   whole WHERE pushed) skips DuckDB.  ``explain`` prints all of this.

Follow an INSERT, UPDATE or DELETE: ``dml`` plans it as a SELECT over the
target table (the new rows cast to the column types, the new image of each
matching row, or the matching keys), DuckDB evaluates it like any query, the
rows are checked against NOT NULL and varchar limits, and the storage
``Transaction`` applies them by primary key, routed to tablets by the
table's partitioning.  RETURNING runs over the written rows.  ``conflict``
plans ON CONFLICT and UPSERT.  ``ddl`` and ``partition_ddl`` handle CREATE,
DROP and range-partition changes through the catalog.

Transactions: outside a block each statement (or each multi-statement Query,
or the extended-protocol messages up to a Sync) is one transaction; inside
BEGIN ... COMMIT every statement takes a fresh snapshot (READ COMMITTED) and
sees the block's own writes.  ``duckdb_errors`` is the one place DuckDB's
exceptions become SQLSTATE errors; ``result`` holds the only types
``server/`` reads back.
"""
