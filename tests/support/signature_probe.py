"""Find the PostgreSQL 15 functions, aggregates, operators and casts nyala answers as PostgreSQL does.

Candidates are PostgreSQL's own pg_proc, pg_operator and pg_cast rows over the
types nyala stores.  Each is called on both servers with sample values and
with NULLs of its argument types; it is kept only when nyala gives the same
result type and value (or the same SQLSTATE) both times.  ``main`` writes the
survivors to ``sql/planner/pg_signatures.txt``, from which nyala's pg_proc,
pg_aggregate, pg_operator and pg_cast are built; tests/e2e/test_pg_signatures.py
re-checks every kept entry, so those catalogs never list what nyala does not do.

    python -m tests.support.signature_probe --nyala DSN   (starts a PostgreSQL 15 itself)
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psycopg

# A sample value and the type's name, per type OID nyala stores or computes.
SAMPLES: dict[int, tuple[str, str]] = {
    16: ("true", "bool"),
    21: ("2::int2", "int2"),
    23: ("3::int4", "int4"),
    20: ("4::int8", "int8"),
    700: ("1.5::float4", "float4"),
    701: ("2.5::float8", "float8"),
    1700: ("3.25::numeric", "numeric"),
    25: ("'abc'::text", "text"),
    1043: ("'abc'::varchar", "varchar"),
    1042: ("'abc'::bpchar", "bpchar"),
    17: ("'\\x0102'::bytea", "bytea"),
    1082: ("'2020-01-02'::date", "date"),
    1114: ("'2020-01-02 03:04:05'::timestamp", "timestamp"),
    1184: ("'2020-01-02 03:04:05+00'::timestamptz", "timestamptz"),
    1186: ("'1 day'::interval", "interval"),
    1083: ("'03:04:05'::time", "time"),
    2950: ("'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "uuid"),
    114: ("'{\"a\":1}'::json", "json"),
    3802: ("'{\"a\":1}'::jsonb", "jsonb"),
}

# Administrative, internal and set-returning families, and the I/O functions of types.
_SKIPPED_NAMES = (
    "^(pg_|_|ts_|lo_|txid|binary_upgrade|brin|gin|gist|spg|bt|hash|has_|array_|json_populate"
    "|jsonb_populate)|(in|out|recv|send|support|sel|typmodin|typmodout)$"
)


@dataclass(frozen=True, slots=True)
class Probe:
    """One candidate: the two statements that decide it."""

    kind: str  # "f", "a", "o" or "c"
    row: tuple[object, ...]
    with_values: str
    with_nulls: str


def candidates(pg: psycopg.Connection) -> list[Probe]:
    """PostgreSQL's rows over the sampled types, each with its two probing statements."""
    known = set(SAMPLES)
    out: list[Probe] = []
    procs = pg.execute(
        "select p.oid, proname, prokind, prorettype, proargtypes::oid[], provolatile, "
        "proisstrict, coalesce(a.aggtranstype, 0), coalesce(a.aggtransfn::text, '-'), "
        "coalesce(a.aggfinalfn::text, '-'), coalesce(a.aggcombinefn::text, '-'), "
        "coalesce(a.aggsortop, 0), a.agginitval "
        "from pg_proc p left join pg_aggregate a on a.aggfnoid = p.oid "
        "where pronamespace = 11 and not proretset and prokind in ('f', 'a') "
        "and provolatile <> 'v' and proname !~ %s order by proname, p.oid",
        (_SKIPPED_NAMES,),
    ).fetchall()
    for row in procs:
        name, kind, result, args = row[1], row[2], row[3], row[4]
        if result not in known or any(a not in known for a in args):
            continue
        values = [SAMPLES[a][0] for a in args]
        nulls = [f"null::{SAMPLES[a][1]}" for a in args]
        if kind == "a":
            if len(args) != 1:
                continue
            rows = f"(values ({values[0]}), ({values[0]})) v(x)"
            out.append(
                Probe(
                    "a",
                    tuple(row),
                    f"select {name}(x) from {rows}",
                    f"select {name}(x) from (values ({nulls[0]})) v(x)",
                )
            )
        else:
            out.append(
                Probe(
                    "f",
                    tuple(row[:7]),
                    f"select {name}({', '.join(values)})",
                    f"select {name}({', '.join(nulls)})",
                )
            )
    operators = pg.execute(
        "select oid, oprname, oprleft, oprright, oprresult, oprcode::oid, oprcom, oprnegate "
        "from pg_operator where oprnamespace = 11 and oprleft <> 0 and oprright <> 0 order by oid"
    ).fetchall()
    for row in operators:
        name, left, right, result = row[1], row[2], row[3], row[4]
        if left not in known or right not in known or result not in known:
            continue
        out.append(
            Probe(
                "o",
                tuple(row),
                f"select {SAMPLES[left][0]} {name} {SAMPLES[right][0]}",
                f"select null::{SAMPLES[left][1]} {name} null::{SAMPLES[right][1]}",
            )
        )
    casts = pg.execute(
        "select oid, castsource, casttarget, castfunc, castcontext, castmethod "
        "from pg_cast order by oid"
    ).fetchall()
    for row in casts:
        source, target = row[1], row[2]
        if source not in known or target not in known:
            continue
        out.append(
            Probe(
                "c",
                tuple(row),
                f"select cast({SAMPLES[source][0]} as {SAMPLES[target][1]})",
                f"select cast(null::{SAMPLES[source][1]} as {SAMPLES[target][1]})",
            )
        )
    return out


def _outcome(conn: psycopg.Connection, sql: str) -> tuple[str, object, str | None]:
    try:
        cur = conn.execute(sql)
        row = cur.fetchone()
        assert cur.description is not None
        return ("ok", cur.description[0].type_code, None if row is None else str(row[0]))
    except psycopg.Error as exc:
        return ("error", exc.sqlstate, None)


def disagreement(probe: Probe, pg: psycopg.Connection, nyala: psycopg.Connection) -> str | None:
    """None when nyala answers both statements as PostgreSQL does, else what differs."""
    for sql in (probe.with_values, probe.with_nulls):
        expected, got = _outcome(pg, sql), _outcome(nyala, sql)
        if expected != got:
            return f"{sql}: PostgreSQL {expected}, nyala {got}"
    if _outcome(pg, probe.with_nulls)[0] != "ok":
        return f"{probe.with_nulls}: fails on PostgreSQL"
    return None


def _line(probe: Probe) -> str:
    row = list(probe.row)
    if probe.kind in ("f", "a"):
        oid, name, kind, result, args, volatility, strict, *agg = row
        fields = [oid, name, kind, result, ",".join(map(str, args)) or "-", volatility, strict]
        if kind == "a":
            transtype, transfn, finalfn, combinefn, sortop, initval = agg
            fields += [transtype, transfn, finalfn, combinefn, sortop, initval or "-"]
        return "\t".join(str(f) for f in fields)
    return "\t".join(str(f) for f in row)


def render(kept: Iterable[Probe]) -> str:
    """The text of sql/planner/pg_signatures.txt: a tab-separated section per kind."""
    by_kind: dict[str, list[str]] = {"f": [], "a": [], "o": [], "c": []}
    for probe in kept:
        by_kind[probe.kind].append(_line(probe))
    sections = {"f": "routines", "a": "aggregates", "o": "operators", "c": "casts"}
    header = "# Generated by python -m tests.support.signature_probe; do not edit.\n"
    return header + "".join(
        f"[{sections[k]}]\n" + "".join(line + "\n" for line in lines)
        for k, lines in by_kind.items()
    )


def main() -> None:
    from tests.support.servers import PostgresServer

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nyala", required=True, help="libpq DSN of a running nyala server")
    parser.add_argument("--out", type=Path, default=Path("sql/planner/pg_signatures.txt"))
    args = parser.parse_args()
    with PostgresServer() as server:
        pg = psycopg.connect(server.dsn, autocommit=True)
        nyala = psycopg.connect(args.nyala, autocommit=True)
        kept = [p for p in candidates(pg) if disagreement(p, pg, nyala) is None]
    args.out.write_text(render(kept))
    print(f"kept {len(kept)} signatures in {args.out}")


if __name__ == "__main__":
    main()
