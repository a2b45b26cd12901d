"""The PostgreSQL 15 functions, aggregates, operators and casts the planner answers as PostgreSQL does.

Most of nyala's functions are DuckDB's reached through sqlglot's transpiling, so
there is no hand-written list of what works; ``pg_signatures.txt`` is measured
instead: tests/support/signature_probe.py calls each PostgreSQL 15 signature
over nyala's types on both servers and keeps it only when nyala gives the same
result type and value.  tests/e2e/test_pg_signatures.py repeats that check, so
the pg_proc, pg_aggregate, pg_operator and pg_cast rows built from this table
(sql/pg_catalog) describe only what a client can really call.  The OIDs are
PostgreSQL's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files


@dataclass(frozen=True, slots=True)
class Aggregation:
    """pg_aggregate's facts about an aggregate (PostgreSQL's, for clients that read them)."""

    transition_type: int
    transition_function: str
    final_function: str
    combine_function: str
    sort_operator: int
    initial_value: str | None


@dataclass(frozen=True, slots=True)
class Routine:
    oid: int
    name: str
    kind: str  # pg_proc.prokind: 'f' function, 'a' aggregate
    result_type: int
    argument_types: tuple[int, ...]
    volatility: str
    strict: bool
    aggregation: Aggregation | None = None


@dataclass(frozen=True, slots=True)
class Operator:
    oid: int
    name: str
    left_type: int
    right_type: int
    result_type: int
    function: int
    commutator: int
    negator: int


@dataclass(frozen=True, slots=True)
class Cast:
    oid: int
    source_type: int
    target_type: int
    function: int
    context: str  # pg_cast.castcontext: 'e' explicit, 'a' assignment, 'i' implicit
    method: str


@dataclass(frozen=True, slots=True)
class Signatures:
    routines: tuple[Routine, ...]
    operators: tuple[Operator, ...]
    casts: tuple[Cast, ...]


def _routine(fields: list[str]) -> Routine:
    oid, name, kind, result, args, volatility, strict, *agg = fields
    aggregation = None
    if agg:
        transtype, transfn, finalfn, combinefn, sortop, initval = agg
        aggregation = Aggregation(
            int(transtype), transfn, finalfn, combinefn, int(sortop),
            None if initval == "-" else initval,
        )  # fmt: skip
    return Routine(
        int(oid),
        name,
        kind,
        int(result),
        tuple(int(a) for a in args.split(",")) if args != "-" else (),
        volatility,
        strict == "True",
        aggregation,
    )


@cache
def signatures() -> Signatures:
    """The measured table, read once."""
    text = files("sql.planner").joinpath("pg_signatures.txt").read_text()
    sections: dict[str, list[list[str]]] = {}
    current: list[list[str]] = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
        else:
            current.append(line.split("\t"))
    return Signatures(
        routines=tuple(
            _routine(f) for f in (*sections.get("routines", []), *sections.get("aggregates", []))
        ),
        operators=tuple(
            Operator(int(o), n, int(lt), int(rt), int(res), int(fn), int(com), int(neg))
            for o, n, lt, rt, res, fn, com, neg in sections.get("operators", [])
        ),
        casts=tuple(
            Cast(int(o), int(s), int(t), int(fn), ctx, method)
            for o, s, t, fn, ctx, method in sections.get("casts", [])
        ),
    )
