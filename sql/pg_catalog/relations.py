"""The pg_catalog relations nyala emulates: each one's columns, as PostgreSQL 15 has them,
with the DuckDB type that holds them, and each one's OID.

pg_catalog.py fills them with rows; the system-query path creates them as
DuckDB tables of these columns.
"""

from __future__ import annotations

from storage.type_oids import TypeOid


def _cols(spec: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in spec.split(","):
        name, dtype = item.split()
        pairs.append((name, dtype.replace("_ARR", "[]")))
    return tuple(pairs)


# Column lists as in PostgreSQL 15's catalogs; "oid"-typed columns are UINTEGER.
RELATIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "pg_namespace": _cols("oid UINTEGER, nspname VARCHAR, nspowner UINTEGER, nspacl VARCHAR_ARR"),
    "pg_class": _cols(
        "oid UINTEGER, relname VARCHAR, relnamespace UINTEGER, reltype UINTEGER, "
        "reloftype UINTEGER, relowner UINTEGER, relam UINTEGER, relfilenode UINTEGER, "
        "reltablespace UINTEGER, relpages INTEGER, reltuples REAL, relallvisible INTEGER, "
        "reltoastrelid UINTEGER, relhasindex BOOLEAN, relisshared BOOLEAN, "
        "relpersistence VARCHAR, relkind VARCHAR, relnatts SMALLINT, relchecks SMALLINT, "
        "relhasrules BOOLEAN, relhastriggers BOOLEAN, relhassubclass BOOLEAN, "
        "relrowsecurity BOOLEAN, relforcerowsecurity BOOLEAN, relispopulated BOOLEAN, "
        "relreplident VARCHAR, relispartition BOOLEAN, relrewrite UINTEGER, "
        "relfrozenxid UINTEGER, relminmxid UINTEGER, relacl VARCHAR_ARR, "
        "reloptions VARCHAR_ARR, relpartbound VARCHAR"
    ),
    "pg_attribute": _cols(
        "attrelid UINTEGER, attname VARCHAR, atttypid UINTEGER, attstattarget INTEGER, "
        "attlen SMALLINT, attnum SMALLINT, attndims INTEGER, attcacheoff INTEGER, "
        "atttypmod INTEGER, attbyval BOOLEAN, attalign VARCHAR, attstorage VARCHAR, "
        "attcompression VARCHAR, attnotnull BOOLEAN, atthasdef BOOLEAN, atthasmissing BOOLEAN, "
        "attidentity VARCHAR, attgenerated VARCHAR, attisdropped BOOLEAN, attislocal BOOLEAN, "
        "attinhcount INTEGER, attcollation UINTEGER, attacl VARCHAR_ARR, attoptions VARCHAR_ARR, "
        "attfdwoptions VARCHAR_ARR, attmissingval VARCHAR"
    ),
    "pg_attrdef": _cols("oid UINTEGER, adrelid UINTEGER, adnum SMALLINT, adbin VARCHAR"),
    "pg_type": _cols(
        "oid UINTEGER, typname VARCHAR, typnamespace UINTEGER, typowner UINTEGER, "
        "typlen SMALLINT, typbyval BOOLEAN, typtype VARCHAR, typcategory VARCHAR, "
        "typispreferred BOOLEAN, typisdefined BOOLEAN, typdelim VARCHAR, typrelid UINTEGER, "
        "typsubscript VARCHAR, typelem UINTEGER, typarray UINTEGER, typinput VARCHAR, "
        "typoutput VARCHAR, typreceive VARCHAR, typsend VARCHAR, typmodin VARCHAR, "
        "typmodout VARCHAR, typanalyze VARCHAR, typalign VARCHAR, typstorage VARCHAR, "
        "typnotnull BOOLEAN, typbasetype UINTEGER, typtypmod INTEGER, typndims INTEGER, "
        "typcollation UINTEGER, typdefaultbin VARCHAR, typdefault VARCHAR, typacl VARCHAR_ARR"
    ),
    "pg_index": _cols(
        "indexrelid UINTEGER, indrelid UINTEGER, indnatts SMALLINT, indnkeyatts SMALLINT, "
        "indisunique BOOLEAN, indnullsnotdistinct BOOLEAN, indisprimary BOOLEAN, "
        "indisexclusion BOOLEAN, indimmediate BOOLEAN, indisclustered BOOLEAN, "
        "indisvalid BOOLEAN, indcheckxmin BOOLEAN, indisready BOOLEAN, indislive BOOLEAN, "
        "indisreplident BOOLEAN, indkey USMALLINT_ARR, indcollation UINTEGER_ARR, "
        "indclass UINTEGER_ARR, indoption USMALLINT_ARR, indexprs VARCHAR, indpred VARCHAR"
    ),
    "pg_constraint": _cols(
        "oid UINTEGER, conname VARCHAR, connamespace UINTEGER, contype VARCHAR, "
        "condeferrable BOOLEAN, condeferred BOOLEAN, convalidated BOOLEAN, conrelid UINTEGER, "
        "contypid UINTEGER, conindid UINTEGER, conparentid UINTEGER, confrelid UINTEGER, "
        "confupdtype VARCHAR, confdeltype VARCHAR, confmatchtype VARCHAR, conislocal BOOLEAN, "
        "coninhcount INTEGER, connoinherit BOOLEAN, conkey SMALLINT_ARR, confkey SMALLINT_ARR, "
        "conpfeqop UINTEGER_ARR, conppeqop UINTEGER_ARR, conffeqop UINTEGER_ARR, "
        "confdelsetcols SMALLINT_ARR, conexclop UINTEGER_ARR, conbin VARCHAR"
    ),
    "pg_description": _cols(
        "objoid UINTEGER, classoid UINTEGER, objsubid INTEGER, description VARCHAR"
    ),
    "pg_am": _cols("oid UINTEGER, amname VARCHAR, amhandler VARCHAR, amtype VARCHAR"),
    "pg_database": _cols(
        "oid UINTEGER, datname VARCHAR, datdba UINTEGER, encoding INTEGER, "
        "datlocprovider VARCHAR, datistemplate BOOLEAN, datallowconn BOOLEAN, "
        "datconnlimit INTEGER, datfrozenxid UINTEGER, datminmxid UINTEGER, "
        "dattablespace UINTEGER, datcollate VARCHAR, datctype VARCHAR, daticulocale VARCHAR, "
        "datcollversion VARCHAR, datacl VARCHAR_ARR"
    ),
    "pg_views": _cols(
        "schemaname VARCHAR, viewname VARCHAR, viewowner VARCHAR, definition VARCHAR"
    ),
    "pg_roles": _cols(
        "rolname VARCHAR, rolsuper BOOLEAN, rolinherit BOOLEAN, rolcreaterole BOOLEAN, "
        "rolcreatedb BOOLEAN, rolcanlogin BOOLEAN, rolreplication BOOLEAN, "
        "rolconnlimit INTEGER, rolpassword VARCHAR, rolvaliduntil TIMESTAMPTZ, "
        "rolbypassrls BOOLEAN, rolconfig VARCHAR_ARR, oid UINTEGER"
    ),
    "pg_auth_members": _cols(
        "roleid UINTEGER, member UINTEGER, grantor UINTEGER, admin_option BOOLEAN"
    ),
    "pg_default_acl": _cols(
        "oid UINTEGER, defaclrole UINTEGER, defaclnamespace UINTEGER, defaclobjtype VARCHAR, "
        "defaclacl VARCHAR_ARR"
    ),
    "pg_settings": _cols(
        "name VARCHAR, setting VARCHAR, unit VARCHAR, category VARCHAR, short_desc VARCHAR, "
        "extra_desc VARCHAR, context VARCHAR, vartype VARCHAR, source VARCHAR, "
        "min_val VARCHAR, max_val VARCHAR, enumvals VARCHAR_ARR, boot_val VARCHAR, "
        "reset_val VARCHAR, sourcefile VARCHAR, sourceline INTEGER, pending_restart BOOLEAN"
    ),
    "pg_sequence": _cols(
        "seqrelid UINTEGER, seqtypid UINTEGER, seqstart BIGINT, seqincrement BIGINT, "
        "seqmax BIGINT, seqmin BIGINT, seqcache BIGINT, seqcycle BOOLEAN"
    ),
    "pg_sequences": _cols(
        "schemaname VARCHAR, sequencename VARCHAR, sequenceowner VARCHAR, data_type VARCHAR, "
        "start_value BIGINT, min_value BIGINT, max_value BIGINT, increment_by BIGINT, "
        "cycle BOOLEAN, cache_size BIGINT, last_value BIGINT"
    ),
    "pg_inherits": _cols(
        "inhrelid UINTEGER, inhparent UINTEGER, inhseqno INTEGER, inhdetachpending BOOLEAN"
    ),
    "pg_partitioned_table": _cols(
        "partrelid UINTEGER, partstrat VARCHAR, partnatts SMALLINT, partdefid UINTEGER, "
        "partattrs USMALLINT_ARR, partclass UINTEGER_ARR, partcollation UINTEGER_ARR, "
        "partexprs VARCHAR"
    ),
    "pg_collation": _cols(
        "oid UINTEGER, collname VARCHAR, collnamespace UINTEGER, collowner UINTEGER, "
        "collprovider VARCHAR, collisdeterministic BOOLEAN, collencoding INTEGER, "
        "collcollate VARCHAR, collctype VARCHAR, colliculocale VARCHAR, collversion VARCHAR"
    ),
    "pg_tablespace": _cols(
        "oid UINTEGER, spcname VARCHAR, spcowner UINTEGER, spcacl VARCHAR_ARR, "
        "spcoptions VARCHAR_ARR"
    ),
    "pg_opclass": _cols(
        "oid UINTEGER, opcmethod UINTEGER, opcname VARCHAR, opcnamespace UINTEGER, "
        "opcowner UINTEGER, opcfamily UINTEGER, opcintype UINTEGER, opcdefault BOOLEAN, "
        "opckeytype UINTEGER"
    ),
    "pg_policy": _cols(
        "oid UINTEGER, polname VARCHAR, polrelid UINTEGER, polcmd VARCHAR, "
        "polpermissive BOOLEAN, polroles UINTEGER_ARR, polqual VARCHAR, polwithcheck VARCHAR"
    ),
    "pg_statistic_ext": _cols(
        "oid UINTEGER, stxrelid UINTEGER, stxname VARCHAR, stxnamespace UINTEGER, "
        "stxowner UINTEGER, stxstattarget INTEGER, stxkeys SMALLINT_ARR, stxkind VARCHAR_ARR, "
        "stxexprs VARCHAR"
    ),
    "pg_publication": _cols(
        "oid UINTEGER, pubname VARCHAR, pubowner UINTEGER, puballtables BOOLEAN, "
        "pubinsert BOOLEAN, pubupdate BOOLEAN, pubdelete BOOLEAN, pubtruncate BOOLEAN, "
        "pubviaroot BOOLEAN"
    ),
    "pg_publication_namespace": _cols("oid UINTEGER, pnpubid UINTEGER, pnnspid UINTEGER"),
    "pg_publication_rel": _cols(
        "oid UINTEGER, prpubid UINTEGER, prrelid UINTEGER, prqual VARCHAR, prattrs SMALLINT_ARR"
    ),
    "pg_trigger": _cols(
        "oid UINTEGER, tgrelid UINTEGER, tgparentid UINTEGER, tgname VARCHAR, "
        "tgfoid UINTEGER, tgtype SMALLINT, tgenabled VARCHAR, tgisinternal BOOLEAN, "
        "tgconstrrelid UINTEGER, tgconstrindid UINTEGER, tgconstraint UINTEGER, "
        "tgdeferrable BOOLEAN, tginitdeferred BOOLEAN, tgnargs SMALLINT"
    ),
    "pg_rewrite": _cols(
        "oid UINTEGER, rulename VARCHAR, ev_class UINTEGER, ev_type VARCHAR, "
        "ev_enabled VARCHAR, is_instead BOOLEAN"
    ),
    "pg_proc": _cols(
        "oid UINTEGER, proname VARCHAR, pronamespace UINTEGER, proowner UINTEGER, "
        "prolang UINTEGER, prokind VARCHAR, proretset BOOLEAN, provolatile VARCHAR, "
        "pronargs SMALLINT, prorettype UINTEGER, proargtypes UINTEGER_ARR, "
        "proallargtypes UINTEGER_ARR, proargmodes VARCHAR_ARR, proargnames VARCHAR_ARR, "
        "prosrc VARCHAR, procost REAL, prorows REAL, provariadic UINTEGER, prosupport VARCHAR, "
        "prosecdef BOOLEAN, proleakproof BOOLEAN, proisstrict BOOLEAN, proparallel VARCHAR, "
        "pronargdefaults SMALLINT, proargdefaults VARCHAR, protrftypes UINTEGER_ARR, "
        "probin VARCHAR, prosqlbody VARCHAR, proconfig VARCHAR_ARR, proacl VARCHAR_ARR"
    ),
    "pg_aggregate": _cols(
        "aggfnoid UINTEGER, aggkind VARCHAR, aggnumdirectargs SMALLINT, aggtransfn VARCHAR, "
        "aggfinalfn VARCHAR, aggcombinefn VARCHAR, aggserialfn VARCHAR, aggdeserialfn VARCHAR, "
        "aggmtransfn VARCHAR, aggminvtransfn VARCHAR, aggmfinalfn VARCHAR, "
        "aggfinalextra BOOLEAN, aggmfinalextra BOOLEAN, aggfinalmodify VARCHAR, "
        "aggmfinalmodify VARCHAR, aggsortop UINTEGER, aggtranstype UINTEGER, "
        "aggtransspace INTEGER, aggmtranstype UINTEGER, aggmtransspace INTEGER, "
        "agginitval VARCHAR, aggminitval VARCHAR"
    ),
    "pg_operator": _cols(
        "oid UINTEGER, oprname VARCHAR, oprnamespace UINTEGER, oprowner UINTEGER, "
        "oprkind VARCHAR, oprcanmerge BOOLEAN, oprcanhash BOOLEAN, oprleft UINTEGER, "
        "oprright UINTEGER, oprresult UINTEGER, oprcom UINTEGER, oprnegate UINTEGER, "
        "oprcode UINTEGER, oprrest VARCHAR, oprjoin VARCHAR"
    ),
    "pg_cast": _cols(
        "oid UINTEGER, castsource UINTEGER, casttarget UINTEGER, castfunc UINTEGER, "
        "castcontext VARCHAR, castmethod VARCHAR"
    ),
    "pg_extension": _cols(
        "oid UINTEGER, extname VARCHAR, extowner UINTEGER, extnamespace UINTEGER, "
        "extrelocatable BOOLEAN, extversion VARCHAR, extconfig UINTEGER_ARR, "
        "extcondition VARCHAR_ARR"
    ),
    "pg_enum": _cols("oid UINTEGER, enumtypid UINTEGER, enumsortorder REAL, enumlabel VARCHAR"),
    "pg_cursors": _cols(
        "name VARCHAR, statement VARCHAR, is_holdable BOOLEAN, is_binary BOOLEAN, "
        "is_scrollable BOOLEAN, creation_time TIMESTAMPTZ"
    ),
    "pg_prepared_statements": _cols(
        "name VARCHAR, statement VARCHAR, prepare_time TIMESTAMPTZ, parameter_types VARCHAR_ARR, "
        "from_sql BOOLEAN, generic_plans BIGINT, custom_plans BIGINT"
    ),
    "pg_prepared_xacts": _cols(
        "transaction UINTEGER, gid VARCHAR, prepared TIMESTAMPTZ, owner VARCHAR, database VARCHAR"
    ),
    "pg_depend": _cols(
        "classid UINTEGER, objid UINTEGER, objsubid INTEGER, refclassid UINTEGER, "
        "refobjid UINTEGER, refobjsubid INTEGER, deptype VARCHAR"
    ),
    "pg_stat_activity": _cols(
        "datid UINTEGER, datname VARCHAR, pid INTEGER, leader_pid INTEGER, usesysid UINTEGER, "
        "usename VARCHAR, application_name VARCHAR, client_addr VARCHAR, "
        "client_hostname VARCHAR, client_port INTEGER, backend_start TIMESTAMPTZ, "
        "xact_start TIMESTAMPTZ, query_start TIMESTAMPTZ, state_change TIMESTAMPTZ, "
        "wait_event_type VARCHAR, wait_event VARCHAR, state VARCHAR, backend_xid UINTEGER, "
        "backend_xmin UINTEGER, query_id BIGINT, query VARCHAR, backend_type VARCHAR"
    ),
    "pg_locks": _cols(
        "locktype VARCHAR, database UINTEGER, relation UINTEGER, page INTEGER, tuple SMALLINT, "
        "virtualxid VARCHAR, transactionid UINTEGER, classid UINTEGER, objid UINTEGER, "
        "objsubid SMALLINT, virtualtransaction VARCHAR, pid INTEGER, mode VARCHAR, "
        "granted BOOLEAN, fastpath BOOLEAN, waitstart TIMESTAMPTZ"
    ),
    "pg_stat_statements": _cols(
        "userid UINTEGER, dbid UINTEGER, toplevel BOOLEAN, queryid BIGINT, query VARCHAR, "
        "plans BIGINT, total_plan_time DOUBLE, min_plan_time DOUBLE, max_plan_time DOUBLE, "
        "mean_plan_time DOUBLE, stddev_plan_time DOUBLE, calls BIGINT, total_exec_time DOUBLE, "
        "min_exec_time DOUBLE, max_exec_time DOUBLE, mean_exec_time DOUBLE, "
        "stddev_exec_time DOUBLE, rows BIGINT, shared_blks_hit BIGINT, shared_blks_read BIGINT, "
        "shared_blks_dirtied BIGINT, shared_blks_written BIGINT, local_blks_hit BIGINT, "
        "local_blks_read BIGINT, local_blks_dirtied BIGINT, local_blks_written BIGINT, "
        "temp_blks_read BIGINT, temp_blks_written BIGINT, blk_read_time DOUBLE, "
        "blk_write_time DOUBLE, temp_blk_read_time DOUBLE, temp_blk_write_time DOUBLE, "
        "wal_records BIGINT, wal_fpi BIGINT"
    )
    + (("wal_bytes", "DECIMAL(38,0)"),)
    + _cols(
        "jit_functions BIGINT, jit_generation_time DOUBLE, jit_inlining_count BIGINT, "
        "jit_inlining_time DOUBLE, jit_optimization_count BIGINT, jit_optimization_time DOUBLE, "
        "jit_emission_count BIGINT, jit_emission_time DOUBLE"
    ),
    "pg_stat_statements_info": _cols("dealloc BIGINT, stats_reset TIMESTAMPTZ"),
    "pg_stat_progress_copy": _cols(
        "pid INTEGER, datid UINTEGER, datname VARCHAR, relid UINTEGER, command VARCHAR, "
        "type VARCHAR, bytes_processed BIGINT, bytes_total BIGINT, tuples_processed BIGINT, "
        "tuples_excluded BIGINT"
    ),
    "pg_stat_database": _cols(
        "datid UINTEGER, datname VARCHAR, numbackends INTEGER, xact_commit BIGINT, "
        "xact_rollback BIGINT, blks_read BIGINT, blks_hit BIGINT, tup_returned BIGINT, "
        "tup_fetched BIGINT, tup_inserted BIGINT, tup_updated BIGINT, tup_deleted BIGINT, "
        "conflicts BIGINT, temp_files BIGINT, temp_bytes BIGINT, deadlocks BIGINT, "
        "checksum_failures BIGINT, checksum_last_failure TIMESTAMPTZ, blk_read_time DOUBLE, "
        "blk_write_time DOUBLE, session_time DOUBLE, active_time DOUBLE, "
        "idle_in_transaction_time DOUBLE, sessions BIGINT, sessions_abandoned BIGINT, "
        "sessions_fatal BIGINT, sessions_killed BIGINT, stats_reset TIMESTAMPTZ"
    ),
    **dict.fromkeys(
        ("pg_stat_all_tables", "pg_stat_user_tables", "pg_stat_sys_tables"),
        _cols(
            "relid UINTEGER, schemaname VARCHAR, relname VARCHAR, seq_scan BIGINT, "
            "seq_tup_read BIGINT, idx_scan BIGINT, idx_tup_fetch BIGINT, n_tup_ins BIGINT, "
            "n_tup_upd BIGINT, n_tup_del BIGINT, n_tup_hot_upd BIGINT, n_live_tup BIGINT, "
            "n_dead_tup BIGINT, n_mod_since_analyze BIGINT, n_ins_since_vacuum BIGINT, "
            "last_vacuum TIMESTAMPTZ, last_autovacuum TIMESTAMPTZ, last_analyze TIMESTAMPTZ, "
            "last_autoanalyze TIMESTAMPTZ, vacuum_count BIGINT, autovacuum_count BIGINT, "
            "analyze_count BIGINT, autoanalyze_count BIGINT"
        ),
    ),
}

# Well-known OIDs of the catalogs themselves, as clients write them ('pg_class'::regclass).
_RELATION_OIDS = {
    "pg_type": 1247,
    "pg_attribute": 1249,
    "pg_proc": 1255,
    "pg_aggregate": 2600,
    "pg_cast": 2605,
    "pg_operator": 2617,
    "pg_class": 1259,
    "pg_database": 1262,
    "pg_authid": 1260,
    "pg_attrdef": 2604,
    "pg_constraint": 2606,
    "pg_description": 2609,
    "pg_index": 2610,
    "pg_inherits": 2611,
    "pg_partitioned_table": 3350,
    "pg_namespace": 2615,
    "pg_am": 2601,
    "pg_rewrite": 2618,
    "pg_trigger": 2620,
    "pg_tablespace": 1213,
    "pg_collation": 3456,
    "pg_opclass": 2616,
    "pg_policy": 3256,
    "pg_statistic_ext": 3381,
    "pg_publication": 6104,
    "pg_publication_namespace": 6237,
    "pg_publication_rel": 6106,
    "pg_sequence": 2224,
    "pg_extension": 3079,
    "pg_enum": 3501,
    "pg_depend": 2608,
    "pg_auth_members": 1261,
    "pg_default_acl": 826,
    "pg_roles": 12_001,
    "pg_settings": 12_002,
    "pg_stat_activity": 12_003,
    "pg_locks": 12_004,
}


# Catalogs pg_dump reads whose objects nyala does not have (foreign tables, security
# labels, extensions' initial privileges, subscriptions ...): present, and empty.
RELATIONS.update(
    {
        "pg_foreign_table": _cols("ftrelid UINTEGER, ftserver UINTEGER, ftoptions VARCHAR_ARR"),
        "pg_foreign_server": _cols(
            "oid UINTEGER, srvname VARCHAR, srvowner UINTEGER, srvfdw UINTEGER, "
            "srvtype VARCHAR, srvversion VARCHAR, srvacl VARCHAR_ARR, srvoptions VARCHAR_ARR"
        ),
        "pg_foreign_data_wrapper": _cols(
            "oid UINTEGER, fdwname VARCHAR, fdwowner UINTEGER, fdwhandler UINTEGER, "
            "fdwvalidator UINTEGER, fdwacl VARCHAR_ARR, fdwoptions VARCHAR_ARR"
        ),
        "pg_user_mapping": _cols(
            "oid UINTEGER, umuser UINTEGER, umserver UINTEGER, umoptions VARCHAR_ARR"
        ),
        "pg_init_privs": _cols(
            "objoid UINTEGER, classoid UINTEGER, objsubid INTEGER, privtype VARCHAR, "
            "initprivs VARCHAR_ARR"
        ),
        "pg_seclabel": _cols(
            "objoid UINTEGER, classoid UINTEGER, objsubid INTEGER, provider VARCHAR, label VARCHAR"
        ),
        "pg_shseclabel": _cols(
            "objoid UINTEGER, classoid UINTEGER, provider VARCHAR, label VARCHAR"
        ),
        "pg_subscription": _cols(
            "oid UINTEGER, subdbid UINTEGER, subname VARCHAR, subowner UINTEGER, "
            "subenabled BOOLEAN, subconninfo VARCHAR, subslotname VARCHAR, "
            "subsynccommit VARCHAR, subpublications VARCHAR_ARR, subbinary BOOLEAN, "
            "substream BOOLEAN, subtwophasestate VARCHAR, subdisableonerr BOOLEAN, "
            "subskiplsn VARCHAR"
        ),
        "pg_event_trigger": _cols(
            "oid UINTEGER, evtname VARCHAR, evtevent VARCHAR, evtowner UINTEGER, "
            "evtfoid UINTEGER, evtenabled VARCHAR, evttags VARCHAR_ARR"
        ),
        "pg_transform": _cols(
            "oid UINTEGER, trftype UINTEGER, trflang UINTEGER, trffromsql UINTEGER, "
            "trftosql UINTEGER"
        ),
        "pg_largeobject_metadata": _cols("oid UINTEGER, lomowner UINTEGER, lomacl VARCHAR_ARR"),
        "pg_conversion": _cols(
            "oid UINTEGER, conname VARCHAR, connamespace UINTEGER, conowner UINTEGER, "
            "conforencoding INTEGER, contoencoding INTEGER, conproc UINTEGER, "
            "condefault BOOLEAN"
        ),
        "pg_opfamily": _cols(
            "oid UINTEGER, opfmethod UINTEGER, opfname VARCHAR, opfnamespace UINTEGER, "
            "opfowner UINTEGER"
        ),
        "pg_ts_config": _cols(
            "oid UINTEGER, cfgname VARCHAR, cfgnamespace UINTEGER, cfgowner UINTEGER, "
            "cfgparser UINTEGER"
        ),
        "pg_ts_dict": _cols(
            "oid UINTEGER, dictname VARCHAR, dictnamespace UINTEGER, dictowner UINTEGER, "
            "dicttemplate UINTEGER, dictinitoption VARCHAR"
        ),
        "pg_ts_parser": _cols(
            "oid UINTEGER, prsname VARCHAR, prsnamespace UINTEGER, prsstart UINTEGER, "
            "prstoken UINTEGER, prsend UINTEGER, prsheadline UINTEGER, prslextype UINTEGER"
        ),
        "pg_language": _cols(
            "oid UINTEGER, lanname VARCHAR, lanowner UINTEGER, lanispl BOOLEAN, "
            "lanpltrusted BOOLEAN, lanplcallfoid UINTEGER, laninline UINTEGER, "
            "lanvalidator UINTEGER, lanacl VARCHAR_ARR"
        ),
        "pg_range": _cols(
            "rngtypid UINTEGER, rngsubtype UINTEGER, rngmultitypid UINTEGER, "
            "rngcollation UINTEGER, rngsubopc UINTEGER, rngcanonical VARCHAR, "
            "rngsubdiff VARCHAR"
        ),
        "pg_amop": _cols(
            "oid UINTEGER, amopfamily UINTEGER, amoplefttype UINTEGER, amoprighttype UINTEGER, "
            "amopstrategy SMALLINT, amoppurpose VARCHAR, amopopr UINTEGER, amopmethod UINTEGER, "
            "amopsortfamily UINTEGER"
        ),
        "pg_amproc": _cols(
            "oid UINTEGER, amprocfamily UINTEGER, amproclefttype UINTEGER, "
            "amprocrighttype UINTEGER, amprocnum SMALLINT, amproc VARCHAR"
        ),
        "pg_seclabels": _cols(
            "objoid UINTEGER, classoid UINTEGER, objsubid INTEGER, objtype VARCHAR, "
            "objnamespace UINTEGER, objname VARCHAR, provider VARCHAR, label VARCHAR"
        ),
        "pg_db_role_setting": _cols(
            "setdatabase UINTEGER, setrole UINTEGER, setconfig VARCHAR_ARR"
        ),
        "pg_ts_template": _cols(
            "oid UINTEGER, tmplname VARCHAR, tmplnamespace UINTEGER, tmplinit UINTEGER, "
            "tmpllexize UINTEGER"
        ),
    }
)
_RELATION_OIDS.update(
    {
        "pg_foreign_table": 3118,
        "pg_foreign_server": 1417,
        "pg_foreign_data_wrapper": 2328,
        "pg_user_mapping": 1418,
        "pg_init_privs": 3394,
        "pg_seclabel": 3596,
        "pg_shseclabel": 3592,
        "pg_subscription": 6100,
        "pg_event_trigger": 3466,
        "pg_transform": 3576,
        "pg_largeobject_metadata": 2995,
        "pg_conversion": 2607,
        "pg_opfamily": 2753,
        "pg_ts_config": 3602,
        "pg_ts_dict": 3600,
        "pg_ts_parser": 3601,
        "pg_ts_template": 3764,
        "pg_language": 2612,
        "pg_range": 3541,
        "pg_partitioned_table": 3350,
        "pg_db_role_setting": 2964,
        "pg_amop": 2602,
        "pg_amproc": 2603,
    }  # fmt: skip
)


def relation_oid(name: str) -> int:
    return _RELATION_OIDS.get(name, 12_100 + sorted(RELATIONS).index(name))


NAME_COLUMNS = frozenset((
    "amname", "attname", "cfgname", "collname", "conname", "datname", "dictname", "enumlabel",
    "evtevent", "evtname", "extname", "fdwname", "lanname", "nspname", "opcname", "opfname",
    "oprname", "owner", "polname", "proname", "prsname", "pubname", "relname", "rolname",
    "rulename", "schemaname", "sequencename", "sequenceowner", "spcname", "srvname", "stxname",
    "subname", "subslotname", "tgname", "tmplname", "typname", "usename", "viewname",
    "viewowner",
    # information_schema's sql_identifier, a domain over name, which is what clients see
    "catalog_name", "column_name", "constraint_catalog", "constraint_name",
    "constraint_schema", "default_character_set_catalog", "default_character_set_name",
    "default_character_set_schema", "grantee", "schema_name", "schema_owner",
    "self_referencing_column_name", "sequence_catalog", "sequence_name", "sequence_schema",
    "table_catalog", "table_name", "table_schema", "udt_name", "udt_schema",
    "unique_constraint_catalog", "unique_constraint_name", "unique_constraint_schema",
    "user_defined_type_catalog", "user_defined_type_name", "user_defined_type_schema",
))  # fmt: skip
"""The catalog columns PostgreSQL 15 types ``name`` (every relation that has one of these
columns types it so), held as VARCHAR and described as name (19)."""

CHAR_COLUMNS = frozenset((
    "aggfinalmodify", "aggkind", "aggmfinalmodify", "amoppurpose", "amtype", "attalign",
    "attcompression", "attgenerated", "attidentity", "attstorage", "castcontext", "castmethod",
    "collprovider", "confdeltype", "confmatchtype", "confupdtype", "contype", "datlocprovider",
    "defaclobjtype", "deptype", "ev_enabled", "ev_type", "evtenabled", "oprkind", "partstrat",
    "polcmd", "privtype", "prokind", "proparallel", "provolatile", "relkind", "relpersistence",
    "relreplident", "srsubstate", "subtwophasestate", "tgenabled", "typalign", "typcategory",
    "typdelim", "typstorage", "typtype",
))  # fmt: skip
"""The pg_catalog columns PostgreSQL 15 types ``"char"``, described as "char" (18)."""

CHARACTER_DATA_COLUMNS = frozenset((
    "action_condition", "action_orientation", "action_statement", "action_timing", "as_locator",
    "attribute_default", "character_value", "check_clause", "check_option", "column_default",
    "comments", "commit_action", "constraint_type", "cycle_option", "data_type", "delete_rule",
    "domain_default", "enforced", "event_manipulation", "external_language", "external_name",
    "feature_id", "feature_name", "foreign_data_wrapper_language", "foreign_server_type",
    "foreign_server_version", "generation_expression", "identity_cycle", "identity_generation",
    "identity_increment", "identity_maximum", "identity_minimum", "identity_start",
    "implementation_info_id", "implementation_info_name", "increment", "initially_deferred",
    "interval_type", "is_deferrable", "is_derived_reference_attribute", "is_deterministic",
    "is_final", "is_generated", "is_grantable", "is_identity", "is_implicitly_invocable",
    "is_insertable_into", "is_instantiable", "is_null_call", "is_nullable", "is_result",
    "is_self_referencing", "is_supported", "is_trigger_deletable", "is_trigger_insertable_into",
    "is_trigger_updatable", "is_typed", "is_udt_dependent", "is_updatable",
    "is_user_defined_cast", "is_verified_by", "library_name", "match_option", "maximum_value",
    "minimum_value", "new_savepoint_level", "nulls_distinct", "object_type", "option_value",
    "ordering_category", "ordering_form", "pad_attribute", "parameter_default", "parameter_mode",
    "parameter_style", "privilege_type", "reference_generation", "reference_type",
    "result_cast_as_locator", "result_cast_from_data_type", "result_cast_interval_type",
    "routine_body", "routine_definition", "routine_type", "schema_level_routine",
    "security_type", "sizing_name", "sql_data_access", "sql_path", "start_value",
    "sub_feature_id", "sub_feature_name", "table_type", "transform_type", "update_rule",
    "user_defined_type_category", "view_definition", "with_hierarchy",
))  # fmt: skip
"""information_schema's character_data and yes_or_no columns: domains over varchar, which
PostgreSQL 15 describes as their base type, varchar (1043)."""

DESCRIBED_COLUMN_TYPES: dict[str, int] = {
    **dict.fromkeys(CHARACTER_DATA_COLUMNS, int(TypeOid.VARCHAR)),
    **dict.fromkeys(CHAR_COLUMNS, int(TypeOid.CHAR)),
    **dict.fromkeys(NAME_COLUMNS, int(TypeOid.NAME)),
}
"""The type a catalog column held as VARCHAR is described as, by its name (text when absent)."""
