"""SQL text in, Arrow batches out: sessions, planning, and execution on DuckDB over tablet scans.

sql/ is laid out by stage; each subpackage imports only the ones below it
(import-linter checks the order in ``make test``):

    session      Session, Database, plans and the plan cache, transaction blocks, settings
    copy         COPY statements and COPY FROM STDIN          } beside each other
    pg_catalog   pg_catalog and information_schema emulation  }
    dml          INSERT, UPDATE, DELETE                       } beside each other
    ddl          CREATE, ALTER, DROP, COMMENT, roles          }
    execution    DuckDB over tablet scans; the shared DatabaseContext
    planner      bind, rewrite for DuckDB, push predicates into ScanSpecs, prune
    frontend     the nyala sqlglot dialect: SQL text -> typed statements
    common       type and OID maps, identifier folding, DuckDB errors, Result

Follow a SELECT:

1. ``session.session.Session.execute`` (simple Query) or ``Session.prepare`` +
   ``Session.execute_prepared`` (extended protocol) receives the text.
2. ``frontend.parser.split`` tokenizes it once with the ``nyala`` dialect
   (``frontend.dialect.Nyala``) and splits it at top-level semicolons, so every
   error position points into the whole query string; ``frontend.parser.parse_tokens``
   reads each piece into a typed statement: sqlglot's own trees for queries, writes
   and DDL, and ``frontend.statements`` nodes (from the grammar modules ``utility``,
   ``cursors``, ``copy``, ``roles``, ``comments``, ``explain``) for the rest.
3. ``Session._plan`` (or ``_plan_reusing``, which first asks
   ``session.plan_cache.PlanCache``) makes one plan class per statement kind
   (``session.plan``: ``QueryPlan``, ``DmlPlan``, ``SystemPlan``, ...), and the
   session dispatches on that type.  A query over user tables goes on to step 4;
   one over the system catalogs to ``pg_catalog.system_query.compile_system_query``.
4. ``planner.binder.bind_query`` resolves tables against the catalog (42P01),
   qualifies and type-annotates the tree with sqlglot (42703), works out which
   columns each table reference reads and infers the type of every untyped ``$n``.
5. ``planner.compiled_query.compile_query`` calls ``planner.pushdown.plan_scans``
   (one ``ScanPlan`` per table reference: predicates, projection, a LIMIT;
   ``catalog.pruner.prune`` picks the tablets) and ``planner.transpile.to_duckdb``
   (integer division, division by zero, ``sum`` types, ``now()``, output names as
   PostgreSQL gives them), and keeps the result as a ``CompiledQuery``.
6. ``execution.runner.QueryRunner.run`` registers one ``execution.executor.ScanSource``
   per table reference on a DuckDB cursor; each time DuckDB opens a source it starts
   a tablet scan (``storage.transaction.Transaction.scan``) at the statement's
   snapshot, so rows stream from storage through DuckDB as Arrow record batches.  A
   query the scan answers alone (plain columns, the whole WHERE pushed) skips DuckDB.
7. ``common.datatypes.wire_oid`` and ``to_wire`` give each result column its
   PostgreSQL type; the ``common.result.Result`` goes back to server/, which encodes
   the batches per column.  ``session.explain`` prints steps 5 and 6.

Follow an INSERT:

1. As steps 1-3 above; the statement is an ``exp.Insert``.
2. ``dml.writes.plan_insert`` binds the source rows as a query over the target
   (VALUES or SELECT, cast to the column types, defaults and sequences filled)
   and compiles it with ``compile_query``; ``dml.key_writes`` recognises
   ``INSERT ... VALUES`` it can apply without DuckDB.  The ``dml.write_plan.WritePlan``
   carries both, plus RETURNING and ON CONFLICT (``dml.conflict``).
3. ``dml.writes.execute_write`` runs the source (``QueryRunner.run_to_table``),
   checks NOT NULL, CHECK and varchar limits (``dml.write_batches.check_constraints``),
   routes the rows to tablets by the table's partitioning (``write_batches.by_tablet``)
   and hands them to the storage ``Transaction``; ``dml.recheck`` re-applies READ
   COMMITTED's rules to rows a concurrent transaction changed.
4. ``session.transaction_block.TransactionBlock.finish_autocommit`` commits outside a
   block: one WAL record, applied to MemRowSets and DeltaMemStores under one commit
   timestamp.  RETURNING runs over the written rows as a query (step 6 above).
"""
