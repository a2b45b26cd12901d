"""pg_proc and pg_aggregate: the functions and aggregates nyala answers as PostgreSQL 15 does.

The rows come from the planner's measured signature table
(``sql.planner.pg_signatures``), so a client or a fuzzer such as sqlsmith that
builds calls from pg_proc only calls what works; PostgreSQL's OIDs are kept so
``regprocedure`` values and pg_dump output read as they do there.
"""

from __future__ import annotations

from collections.abc import Iterator

from sql.pg_catalog.sequences import Row
from sql.planner.pg_signatures import signatures

PG_CATALOG_OID = 11
SUPERUSER_OID = 10
INTERNAL_LANGUAGE_OID = 12


def rows() -> Iterator[Row]:
    """One pg_proc row per routine, and a pg_aggregate row per aggregate."""
    for routine in signatures().routines:
        yield Row(
            "pg_proc",
            dict(
                oid=routine.oid,
                proname=routine.name,
                pronamespace=PG_CATALOG_OID,
                proowner=SUPERUSER_OID,
                prolang=INTERNAL_LANGUAGE_OID,
                procost=1.0,
                prorows=0.0,
                provariadic=0,
                prosupport="-",
                prokind=routine.kind,
                prosecdef=False,
                proleakproof=False,
                proisstrict=routine.strict,
                proretset=False,
                provolatile=routine.volatility,
                proparallel="s",
                pronargs=len(routine.argument_types),
                pronargdefaults=0,
                prorettype=routine.result_type,
                proargtypes=list(routine.argument_types),
                prosrc=routine.name if routine.kind == "f" else "aggregate_dummy",
            ),
        )
        agg = routine.aggregation
        if agg is None:
            continue
        yield Row(
            "pg_aggregate",
            dict(
                aggfnoid=routine.oid,
                aggkind="n",
                aggnumdirectargs=0,
                aggtransfn=agg.transition_function,
                aggfinalfn=agg.final_function,
                aggcombinefn=agg.combine_function,
                aggserialfn="-",
                aggdeserialfn="-",
                aggmtransfn="-",
                aggminvtransfn="-",
                aggmfinalfn="-",
                aggfinalextra=False,
                aggmfinalextra=False,
                aggfinalmodify="r",
                aggmfinalmodify="r",
                aggsortop=agg.sort_operator,
                aggtranstype=agg.transition_type,
                aggtransspace=0,
                aggmtranstype=0,
                aggmtransspace=0,
                agginitval=agg.initial_value,
            ),
        )
