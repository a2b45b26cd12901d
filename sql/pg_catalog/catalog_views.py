"""pg_catalog's views that PostgreSQL defines in SQL over its catalogs: pg_tables,
pg_indexes and pg_user.

Scripts, BI tools and DBAs read these more than the catalogs under them
(``select tablename from pg_tables where schemaname = 'public'``).  Each is
PostgreSQL 15's definition (``\\d+ pg_tables`` there) over the emulated ``pgc``
relations, with its columns in PostgreSQL's order.
"""

from __future__ import annotations

VIEWS: dict[str, str] = {
    "pg_tables": """
        SELECT n.nspname AS schemaname, c.relname AS tablename,
               pgf_pg_get_userbyid(c.relowner) AS tableowner, t.spcname AS tablespace,
               c.relhasindex AS hasindexes, c.relhasrules AS hasrules,
               c.relhastriggers AS hastriggers, c.relrowsecurity AS rowsecurity
        FROM pgc.pg_class c
        LEFT JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pgc.pg_tablespace t ON t.oid = c.reltablespace
        WHERE c.relkind IN ('r', 'p')""",
    "pg_indexes": """
        SELECT n.nspname AS schemaname, c.relname AS tablename, i.relname AS indexname,
               t.spcname AS tablespace, pgf_pg_get_indexdef(i.oid) AS indexdef
        FROM pgc.pg_index x
        JOIN pgc.pg_class c ON c.oid = x.indrelid
        JOIN pgc.pg_class i ON i.oid = x.indexrelid
        LEFT JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pgc.pg_tablespace t ON t.oid = i.reltablespace
        WHERE c.relkind IN ('r', 'm', 'p') AND i.relkind IN ('i', 'I')""",
    "pg_user": """
        SELECT rolname AS usename, oid AS usesysid, rolcreatedb AS usecreatedb,
               rolsuper AS usesuper, rolreplication AS userepl, rolbypassrls AS usebypassrls,
               '********' AS passwd, rolvaliduntil AS valuntil, rolconfig AS useconfig
        FROM pgc.pg_roles
        WHERE rolcanlogin""",
    "pg_user_mappings": """
        SELECT um.oid AS umid, s.oid AS srvid, s.srvname, um.umuser,
               pgf_pg_get_userbyid(um.umuser) AS usename, um.umoptions
        FROM pgc.pg_user_mapping um
        JOIN pgc.pg_foreign_server s ON s.oid = um.umserver""",
}
