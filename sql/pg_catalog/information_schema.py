"""information_schema views (SQL-standard metadata) defined over the emulated pg_catalog.

Each entry is the SELECT a view in DuckDB's ``infos`` schema runs over the
``pgc`` relations, with PostgreSQL 15's column names for the columns tools read.
"""

from __future__ import annotations

from sql.pg_catalog.column_privilege_rows import COLUMN_GRANTS

# One row per privilege in each user table's ACL (its owner's default when relacl is NULL),
# as PostgreSQL's view explodes them; the owner's rights are always grantable.
_TABLE_GRANTS = """
        WITH items AS (
            SELECT n.nspname, c.relname, r.rolname AS owner,
                   unnest(coalesce(c.relacl, [r.rolname || '=arwdDxt/' || r.rolname])) AS item
            FROM pgc.pg_class c JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
            JOIN pgc.pg_roles r ON r.oid = c.relowner
            WHERE c.relkind IN ('r', 'v', 'p') AND n.nspname = 'public'
        ), parts AS (
            SELECT nspname, relname, owner, split_part(item, '=', 1) AS grantee,
                   split_part(split_part(item, '=', 2), '/', 1) AS rights,
                   split_part(item, '/', 2) AS grantor
            FROM items
        )
        SELECT g.grantor, CASE WHEN g.grantee = '' THEN 'PUBLIC' ELSE g.grantee END AS grantee,
               (SELECT datname FROM pgc.pg_database LIMIT 1) AS table_catalog,
               g.nspname AS table_schema, g.relname AS table_name, p.name AS privilege_type,
               CASE WHEN g.grantee = g.owner OR contains(g.rights, p.letter || '*')
                    THEN 'YES' ELSE 'NO' END AS is_grantable,
               CASE WHEN p.name = 'SELECT' THEN 'YES' ELSE 'NO' END AS with_hierarchy
        FROM parts g
        JOIN (VALUES (1, 'a', 'INSERT'), (2, 'r', 'SELECT'), (3, 'w', 'UPDATE'),
                     (4, 'd', 'DELETE'), (5, 'D', 'TRUNCATE'), (6, 'x', 'REFERENCES'),
                     (7, 't', 'TRIGGER')) p(n, letter, name) ON contains(g.rights, p.letter)
        WHERE {visible}"""
_SUPERUSER = "pgf_current_setting('is_superuser') = 'on'"
_ME = "pgf_current_setting('session_authorization')"
_VISIBLE_GRANT = f"{_SUPERUSER} OR g.grantor = {_ME} OR g.grantee IN ({_ME}, '')"
_VISIBLE_ROLE_GRANT = (
    f"({_SUPERUSER} AND g.grantee <> '') OR g.grantor = {_ME} OR g.grantee = {_ME}"
)

VIEWS: dict[str, str] = {
    "schemata": """
        SELECT current_database() AS catalog_name, n.nspname AS schema_name,
               'nyala' AS schema_owner, NULL::VARCHAR AS default_character_set_catalog,
               NULL::VARCHAR AS default_character_set_schema,
               NULL::VARCHAR AS default_character_set_name, NULL::VARCHAR AS sql_path
        FROM pgc.pg_namespace n""",
    "tables": """
        SELECT (SELECT datname FROM pgc.pg_database LIMIT 1) AS table_catalog,
               n.nspname AS table_schema, c.relname AS table_name,
               CASE WHEN n.nspname = 'pg_catalog' AND c.relkind = 'v' THEN 'VIEW'
                    WHEN n.nspname = 'pg_catalog' THEN 'BASE TABLE'
                    WHEN c.relkind = 'v' THEN 'VIEW'
                    WHEN c.relpersistence = 't' THEN 'LOCAL TEMPORARY' ELSE 'BASE TABLE' END
                    AS table_type,
               NULL::VARCHAR AS self_referencing_column_name,
               NULL::VARCHAR AS reference_generation, NULL::VARCHAR AS user_defined_type_catalog,
               NULL::VARCHAR AS user_defined_type_schema, NULL::VARCHAR AS user_defined_type_name,
               'YES' AS is_insertable_into, 'NO' AS is_typed, NULL::VARCHAR AS commit_action
        FROM pgc.pg_class c JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'v', 'p')""",
    "columns": """
        SELECT (SELECT datname FROM pgc.pg_database LIMIT 1) AS table_catalog,
               n.nspname AS table_schema, c.relname AS table_name, a.attname AS column_name,
               a.attnum::INTEGER AS ordinal_position, d.adbin AS column_default,
               CASE WHEN a.attnotnull THEN 'NO' ELSE 'YES' END AS is_nullable,
               CASE WHEN t.typcategory = 'A' THEN 'ARRAY'
                    ELSE regexp_replace(pgf_format_type(a.atttypid, NULL), '\\(.*\\)', '')
               END AS data_type,
               CASE WHEN a.atttypid IN (1043, 1042) AND a.atttypmod >= 4
                    THEN a.atttypmod - 4 END AS character_maximum_length,
               CASE WHEN a.atttypid IN (1043, 1042, 25) THEN 1073741824 END
                    AS character_octet_length,
               CASE a.atttypid WHEN 21 THEN 16 WHEN 23 THEN 32 WHEN 20 THEN 64
                    WHEN 700 THEN 24 WHEN 701 THEN 53
                    WHEN 1700 THEN CASE WHEN a.atttypmod >= 4 THEN (a.atttypmod - 4) >> 16 END
               END AS numeric_precision,
               CASE WHEN a.atttypid IN (21, 23, 20, 1700) THEN 10
                    WHEN a.atttypid IN (700, 701) THEN 2 END AS numeric_precision_radix,
               CASE WHEN a.atttypid IN (21, 23, 20) THEN 0
                    WHEN a.atttypid = 1700 AND a.atttypmod >= 4
                    THEN (a.atttypmod - 4) & 65535 END AS numeric_scale,
               CASE WHEN a.atttypid IN (1082) THEN 0 WHEN a.atttypid IN (1114, 1184) THEN 6
               END AS datetime_precision,
               t.typname AS udt_name, 'pg_catalog' AS udt_schema,
               CASE WHEN a.attidentity IN ('a', 'd') THEN 'YES' ELSE 'NO' END AS is_identity,
               CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' END
                    AS identity_generation,
               'NEVER' AS is_generated, 'YES' AS is_updatable
        FROM pgc.pg_attribute a
        JOIN pgc.pg_class c ON c.oid = a.attrelid
        JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
        JOIN pgc.pg_type t ON t.oid = a.atttypid
        LEFT JOIN pgc.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE c.relkind IN ('r', 'v', 'p') AND a.attnum > 0 AND NOT a.attisdropped""",
    "table_constraints": """
        SELECT (SELECT datname FROM pgc.pg_database LIMIT 1) AS constraint_catalog,
               n.nspname AS constraint_schema, con.conname AS constraint_name,
               (SELECT datname FROM pgc.pg_database LIMIT 1) AS table_catalog,
               n.nspname AS table_schema, c.relname AS table_name,
               CASE con.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE'
                    WHEN 'f' THEN 'FOREIGN KEY' WHEN 'c' THEN 'CHECK' END AS constraint_type,
               CASE WHEN con.condeferrable THEN 'YES' ELSE 'NO' END AS is_deferrable,
               CASE WHEN con.condeferred THEN 'YES' ELSE 'NO' END AS initially_deferred,
               'YES' AS enforced
        FROM pgc.pg_constraint con
        JOIN pgc.pg_class c ON c.oid = con.conrelid
        JOIN pgc.pg_namespace n ON n.oid = c.relnamespace""",
    "key_column_usage": """
        SELECT (SELECT datname FROM pgc.pg_database LIMIT 1) AS constraint_catalog,
               n.nspname AS constraint_schema, con.conname AS constraint_name,
               (SELECT datname FROM pgc.pg_database LIMIT 1) AS table_catalog,
               n.nspname AS table_schema, c.relname AS table_name, a.attname AS column_name,
               k.pos::INTEGER AS ordinal_position,
               CASE WHEN con.contype = 'f' THEN list_position(
                   (SELECT i.indkey FROM pgc.pg_index i WHERE i.indexrelid = con.conindid),
                   con.confkey[k.pos::INTEGER]::USMALLINT)::INTEGER
               END AS position_in_unique_constraint
        FROM (SELECT oid, conname, conrelid, unnest(conkey) AS attnum,
                     generate_subscripts(conkey, 1) AS pos
              FROM pgc.pg_constraint WHERE contype IN ('p', 'u', 'f')) k
        JOIN pgc.pg_constraint con ON con.oid = k.oid
        JOIN pgc.pg_class c ON c.oid = con.conrelid
        JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
        JOIN pgc.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum""",
    "referential_constraints": """
        SELECT (SELECT datname FROM pgc.pg_database LIMIT 1) AS constraint_catalog,
               n.nspname AS constraint_schema, con.conname AS constraint_name,
               CASE WHEN u.conname IS NOT NULL
                    THEN (SELECT datname FROM pgc.pg_database LIMIT 1) END
                    AS unique_constraint_catalog,
               CASE WHEN u.conname IS NOT NULL THEN n.nspname END AS unique_constraint_schema,
               u.conname AS unique_constraint_name,
               CASE con.confmatchtype WHEN 'f' THEN 'FULL' WHEN 'p' THEN 'PARTIAL'
                    ELSE 'NONE' END AS match_option,
               CASE con.confupdtype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL'
                    WHEN 'd' THEN 'SET DEFAULT' WHEN 'r' THEN 'RESTRICT'
                    ELSE 'NO ACTION' END AS update_rule,
               CASE con.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL'
                    WHEN 'd' THEN 'SET DEFAULT' WHEN 'r' THEN 'RESTRICT'
                    ELSE 'NO ACTION' END AS delete_rule
        FROM pgc.pg_constraint con
        JOIN pgc.pg_namespace n ON n.oid = con.connamespace
        LEFT JOIN pgc.pg_constraint u ON u.conindid = con.conindid
             AND u.conrelid = con.confrelid AND u.contype IN ('p', 'u')
        WHERE con.contype = 'f'""",
    "constraint_column_usage": """
        SELECT (SELECT datname FROM pgc.pg_database LIMIT 1) AS table_catalog,
               n.nspname AS table_schema, c.relname AS table_name, a.attname AS column_name,
               (SELECT datname FROM pgc.pg_database LIMIT 1) AS constraint_catalog,
               n.nspname AS constraint_schema, k.conname AS constraint_name
        FROM (SELECT conname,
                     CASE WHEN contype = 'f' THEN confrelid ELSE conrelid END AS relid,
                     unnest(CASE WHEN contype = 'f' THEN confkey ELSE conkey END) AS attnum
              FROM pgc.pg_constraint WHERE contype IN ('p', 'u', 'f', 'c')) k
        JOIN pgc.pg_class c ON c.oid = k.relid
        JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
        JOIN pgc.pg_attribute a ON a.attrelid = k.relid AND a.attnum = k.attnum""",
    "check_constraints": """
        SELECT (SELECT datname FROM pgc.pg_database LIMIT 1) AS constraint_catalog,
               n.nspname AS constraint_schema, con.conname AS constraint_name,
               '(' || substring(con.conbin, 7) || ')' AS check_clause
        FROM pgc.pg_constraint con
        JOIN pgc.pg_namespace n ON n.oid = con.connamespace
        WHERE con.contype = 'c'""",
    "sequences": """
        SELECT (SELECT datname FROM pgc.pg_database LIMIT 1) AS sequence_catalog,
               n.nspname AS sequence_schema, c.relname AS sequence_name,
               pgf_format_type(s.seqtypid, NULL) AS data_type,
               CASE s.seqtypid WHEN 21 THEN 16 WHEN 23 THEN 32 ELSE 64 END
                    AS numeric_precision,
               2 AS numeric_precision_radix, 0 AS numeric_scale,
               s.seqstart::VARCHAR AS start_value, s.seqmin::VARCHAR AS minimum_value,
               s.seqmax::VARCHAR AS maximum_value, s.seqincrement::VARCHAR AS "increment",
               CASE WHEN s.seqcycle THEN 'YES' ELSE 'NO' END AS cycle_option
        FROM pgc.pg_sequence s
        JOIN pgc.pg_class c ON c.oid = s.seqrelid
        JOIN pgc.pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT EXISTS (SELECT 1 FROM pgc.pg_depend d
                          WHERE d.objid = c.oid AND d.deptype = 'i')""",
    "views": """
        SELECT (SELECT datname FROM pgc.pg_database LIMIT 1) AS table_catalog,
               v.schemaname AS table_schema, v.viewname AS table_name,
               v.definition AS view_definition, 'NONE' AS check_option,
               'NO' AS is_updatable, 'NO' AS is_insertable_into,
               'NO' AS is_trigger_updatable, 'NO' AS is_trigger_deletable,
               'NO' AS is_trigger_insertable_into
        FROM pgc.pg_views v""",
    "table_privileges": _TABLE_GRANTS.format(visible=_VISIBLE_GRANT),
    "role_table_grants": _TABLE_GRANTS.format(visible=_VISIBLE_ROLE_GRANT),
    "column_privileges": COLUMN_GRANTS.format(visible=_VISIBLE_GRANT),
    "role_column_grants": COLUMN_GRANTS.format(visible=_VISIBLE_ROLE_GRANT),
}
