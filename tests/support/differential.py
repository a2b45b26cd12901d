"""The differential tester: a corpus of SQL files run statement by statement on nyala and on
PostgreSQL 15, each statement judged to agree or not.

Two answers agree when both servers fail with the same SQLSTATE class (its first two
characters), or both succeed with the same command tag, column names and rows (in the
order given when the statement sorts, else as multisets).  The corpus is
``tests/sql/corpus/*.sql``: plain SQL, one statement ending with ``;`` at the end of a
line (a statement may span lines), ``--`` lines are comments.  A ``-- differs: why``
comment says why the statement after it does not agree yet; ``disagreeing.txt`` shows it.  Each file runs on a
fresh nyala server and a fresh PostgreSQL database, in autocommit.

``tests/sql/corpus/agreeing.txt`` is the baseline: the statements that agreed when it was
last recorded.  ``tests/e2e/test_differential.py`` fails when one of them no longer
agrees; ``disagreeing.txt`` beside it lists the rest with the difference seen.

Run by hand (starts both servers itself)::

    python -m tests.support.differential            # report agreement per file
    python -m tests.support.differential --record   # rewrite agreeing.txt and disagreeing.txt

For a test that checks a few statements of its own side by side, ``Pair`` holds one
connection to each server: ``check`` runs a statement on both and asserts the same rows or
SQLSTATE (``outcome``), ``same`` compares any reading of both, ``run`` applies writes to
both::

    with Pair.connect(nyala.dsn, postgres.dsn, SETUP) as pair:
        pair.check("select %s::int[]", ([1, None],), binary=True)

For a scenario that needs connections of its own (several sessions, roles, COPY), ``both``
runs it against each server and asserts the same result, and ``both_connected`` hands it a
fresh autocommit connection to each::

    steps = both(blocking_scenario, nyala_server, postgres_server)  # each takes a server
    tag = both_connected(copy_in, nyala.dsn, postgres.dsn)  # copy_in takes a connection
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import psycopg

CORPUS = Path(__file__).resolve().parents[1] / "sql" / "corpus"
BASELINE = CORPUS / "agreeing.txt"
DISAGREEING = CORPUS / "disagreeing.txt"
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)
_REASON = "-- differs:"
T = TypeVar("T")
S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement of a corpus file; ``key`` names it in the baseline."""

    file: str
    line: int
    sql: str
    key: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Answer:
    """What a server said to a statement: an error's SQLSTATE, or a tag, columns and rows."""

    sqlstate: str | None = None
    message: str = ""
    tag: str = ""
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str | None, ...], ...] = ()

    def brief(self) -> str:
        if self.sqlstate is not None:
            return f"ERROR {self.sqlstate}: {self.message.splitlines()[0] if self.message else ''}"
        shown = "; ".join("|".join("NULL" if v is None else v for v in r) for r in self.rows[:3])
        more = f" (+{len(self.rows) - 3} rows)" if len(self.rows) > 3 else ""
        return f"{self.tag} [{','.join(self.columns)}] {shown}{more}"


@dataclass(frozen=True, slots=True)
class Verdict:
    statement: Statement
    nyala: Answer
    postgres: Answer

    @property
    def agrees(self) -> bool:
        return agree(self.statement, self.nyala, self.postgres)


def read_corpus_file(path: Path) -> list[Statement]:
    """The statements of one corpus file, each keyed by file, text and occurrence."""
    statements: list[Statement] = []
    seen: Counter[str] = Counter()
    body: list[str] = []
    start = 0
    reason = ""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.strip()
        if not body and stripped.startswith(_REASON):
            reason = stripped[len(_REASON) :].strip()
            continue
        if not body and (not stripped or stripped.startswith("--")):
            continue
        if not body:
            start = number
        body.append(line)
        if stripped.endswith(";"):
            sql = "\n".join(body).strip()
            body = []
            digest = hashlib.sha1(sql.encode()).hexdigest()[:12]
            seen[digest] += 1
            key = f"{path.stem}:{digest}:{seen[digest]}"
            statements.append(Statement(path.stem, start, sql, key, reason))
            reason = ""
    if body:
        raise ValueError(f"{path}:{start}: statement without a closing ';'")
    return statements


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.sql"))


def answer(conn: psycopg.Connection, sql: str) -> Answer:
    """Run one statement and describe what came back, rows in PostgreSQL's text format."""
    with conn.cursor() as cursor:
        try:
            cursor.execute(sql.encode(), prepare=False)
        except psycopg.Error as exc:
            return Answer(sqlstate=exc.sqlstate or "?????", message=str(exc))
        result = cursor.pgresult
        columns: tuple[str, ...] = ()
        rows: tuple[tuple[str | None, ...], ...] = ()
        if result is not None and result.nfields:
            columns = tuple(
                (result.fname(c) or b"").decode(errors="replace") for c in range(result.nfields)
            )
            rows = tuple(
                tuple(
                    None if (v := result.get_value(r, c)) is None else v.decode(errors="replace")
                    for c in range(result.nfields)
                )
                for r in range(result.ntuples)
            )
        return Answer(tag=cursor.statusmessage or "", columns=columns, rows=rows)


def agree(statement: Statement, nyala: Answer, postgres: Answer) -> bool:
    if nyala.sqlstate is not None or postgres.sqlstate is not None:
        return (
            nyala.sqlstate is not None
            and postgres.sqlstate is not None
            and nyala.sqlstate[:2] == postgres.sqlstate[:2]
        )
    if (nyala.tag, nyala.columns) != (postgres.tag, postgres.columns):
        return False
    if _ORDER_BY.search(statement.sql):
        return nyala.rows == postgres.rows
    return Counter(nyala.rows) == Counter(postgres.rows)


def _connect(dsn: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn, autocommit=True)
    conn.add_notice_handler(lambda _notice: None)
    return conn


def compare_file(path: Path, nyala_dsn: str, postgres_dsn: str) -> list[Verdict]:
    """Run every statement of ``path`` on both servers (fresh ones) and judge each."""
    verdicts = []
    with _connect(nyala_dsn) as nyala, _connect(postgres_dsn) as postgres:
        for statement in read_corpus_file(path):
            verdicts.append(
                Verdict(statement, answer(nyala, statement.sql), answer(postgres, statement.sql))
            )
            for conn in (nyala, postgres):  # a failed block must not spill into the next file
                if conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR:
                    conn.execute("ROLLBACK")
    return verdicts


def read_baseline() -> set[str]:
    if not BASELINE.exists():
        return set()
    return {
        line.split()[0]
        for line in BASELINE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }


def regressions(verdicts: list[Verdict], baseline: set[str]) -> list[Verdict]:
    """Statements of the baseline that no longer agree."""
    return [v for v in verdicts if v.statement.key in baseline and not v.agrees]


def describe(verdict: Verdict) -> str:
    s = verdict.statement
    one_line = " ".join(s.sql.split())
    return (
        f"{s.file}.sql:{s.line}: {one_line}\n"
        f"    nyala:    {verdict.nyala.brief()}\n"
        f"    postgres: {verdict.postgres.brief()}\n"
        f"    why:      {s.reason or 'not yet explained'}"
    )


def record(verdicts: list[Verdict]) -> None:
    """Rewrite the baseline and the list of disagreements from a whole-corpus run."""
    header = (
        "# Corpus statements that answer as PostgreSQL 15 does (tests/support/differential.py).\n"
        "# Recorded with `python -m tests.support.differential --record`; a statement listed\n"
        "# here that stops agreeing fails tests/e2e/test_differential.py.\n"
    )
    agreeing = [v for v in verdicts if v.agrees]
    BASELINE.write_text(
        header
        + "".join(f"{v.statement.key} {' '.join(v.statement.sql.split())[:80]}\n" for v in agreeing)
    )
    DISAGREEING.write_text(
        "# Corpus statements that do not yet answer as PostgreSQL 15 does, and how they differ.\n"
        "# Recorded with `python -m tests.support.differential --record`.\n\n"
        + "\n".join(describe(v) for v in verdicts if not v.agrees)
        + "\n"
    )


def summary(verdicts: list[Verdict]) -> str:
    by_file: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by_file.setdefault(v.statement.file, []).append(v)
    lines = []
    for name, items in by_file.items():
        agreeing = sum(v.agrees for v in items)
        lines.append(f"{name:24} {agreeing:5}/{len(items):<5} {100 * agreeing / len(items):5.1f}%")
    total = len(verdicts)
    agreeing = sum(v.agrees for v in verdicts)
    internal = sum(v.nyala.sqlstate == "XX000" for v in verdicts)
    lines.append(
        f"{'TOTAL':24} {agreeing:5}/{total:<5} {100 * agreeing / max(total, 1):5.1f}%"
        f"   XX000 on nyala: {internal}"
    )
    return "\n".join(lines)


# Side by side: the same statements on a nyala and a PostgreSQL connection, in one test.


def outcome(
    conn: psycopg.Connection[Any],
    sql: str,
    params: Sequence[Any] = (),
    *,
    binary: bool = False,
    prepare: bool | None = None,
    messages: bool = False,
    scalar: bool = False,
) -> Any:
    """What one statement gives on ``conn``: its rows (``fetchall``; with ``scalar``, the
    first row's first value, None without rows), or the error's SQLSTATE (with its primary
    message and detail when ``messages``).  The connection is left usable
    (it is in autocommit)."""
    try:
        cursor = conn.execute(sql, params, binary=binary, prepare=prepare)
    except psycopg.Error as exc:
        if messages:
            return exc.sqlstate, exc.diag.message_primary, exc.diag.message_detail
        return exc.sqlstate
    if scalar:
        row = cursor.fetchone()
        return None if row is None else row[0]
    return cursor.fetchall()


def both(scenario: Callable[[S], T], nyala: S, postgres: S) -> T:
    """``scenario`` run against nyala, then against PostgreSQL (a server, a DSN, ...): assert
    both give the same, naming the steps that differ when both give lists; return nyala's."""
    ours, theirs = scenario(nyala), scenario(postgres)
    assert ours == theirs, _difference(ours, theirs)
    return ours


def both_connected(
    scenario: Callable[[psycopg.Connection[Any]], T], nyala_dsn: str, postgres_dsn: str
) -> T:
    """``scenario`` on a fresh autocommit connection to each server (``both``)."""

    def run(dsn: str) -> T:
        with psycopg.connect(dsn, autocommit=True) as conn:
            return scenario(conn)

    return both(run, nyala_dsn, postgres_dsn)


def _difference(ours: object, theirs: object) -> str:
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        steps = [(i, n, p) for i, (n, p) in enumerate(zip(ours, theirs, strict=True)) if n != p]
        return "steps that differ (index, nyala, postgres): " + repr(steps)
    return f"nyala {ours!r} != postgres {theirs!r}"


@dataclass(frozen=True, slots=True)
class Pair:
    """One autocommit connection to nyala and one to PostgreSQL, for a side-by-side test."""

    nyala: psycopg.Connection[Any]
    postgres: psycopg.Connection[Any]

    @classmethod
    @contextlib.contextmanager
    def connect(
        cls, nyala_dsn: str, postgres_dsn: str, setup: Sequence[str] = ()
    ) -> Iterator[Pair]:
        """Both connections, with ``setup`` run on each first; closed on exit."""
        with (
            psycopg.connect(nyala_dsn, autocommit=True) as nyala,
            psycopg.connect(postgres_dsn, autocommit=True) as postgres,
        ):
            pair = cls(nyala, postgres)
            pair.run(*setup)
            yield pair

    def __iter__(self) -> Iterator[psycopg.Connection[Any]]:
        return iter((self.nyala, self.postgres))

    def run(self, *statements: str) -> None:
        """Run statements that must succeed on both (set-up, writes between checks)."""
        for conn in self:
            for statement in statements:
                conn.execute(statement)

    def same(self, read: Callable[[psycopg.Connection[Any]], T], why: str = "") -> T:
        """``read`` on each connection; assert both give the same and return it."""
        ours, theirs = read(self.nyala), read(self.postgres)
        assert ours == theirs, f"{why}: nyala {ours!r} != postgres {theirs!r}"
        return theirs

    def check(
        self,
        sql: str,
        params: Sequence[Any] = (),
        *,
        binary: bool = False,
        prepare: bool | None = None,
        messages: bool = False,
        sort: bool = False,
    ) -> Any:
        """Run ``sql`` on both and assert the same ``outcome`` (rows in any order when
        ``sort``); return PostgreSQL's."""

        def read(conn: psycopg.Connection[Any]) -> Any:
            found = outcome(conn, sql, params, binary=binary, prepare=prepare, messages=messages)
            if sort and isinstance(found, list):
                return sorted(found, key=repr)
            return found

        return self.same(read, f"{sql} {tuple(params)!r} binary={binary}")


def main(argv: list[str] | None = None) -> int:
    from tests.support.servers import NyalaServer, PostgresServer, make_dsn

    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--record", action="store_true", help="rewrite the baseline files")
    args.add_argument("--show", action="store_true", help="print every disagreement")
    args.add_argument("files", nargs="*", help="corpus file stems (default: all)")
    options = args.parse_args(argv)
    paths = [p for p in corpus_files() if not options.files or p.stem in options.files]
    if options.record and options.files:
        args.error("--record rewrites the baseline from the whole corpus: name no files")
    verdicts: list[Verdict] = []
    postgres = PostgresServer().start()
    try:
        with _connect(postgres.dsn) as admin:
            for path in paths:
                name = f"corpus_{path.stem}"
                admin.execute(f'drop database if exists "{name}"')
                admin.execute(f'create database "{name}"')
                with (
                    tempfile.TemporaryDirectory(prefix="nyala-corpus-") as data_dir,
                    NyalaServer(data_dir) as nyala,
                ):
                    verdicts += compare_file(
                        path, nyala.dsn, make_dsn(postgres.host, postgres.port, dbname=name)
                    )
                admin.execute(f'drop database if exists "{name}"')
    finally:
        postgres.stop()
    if options.show:
        print("\n".join(describe(v) for v in verdicts if not v.agrees))
    print(summary(verdicts))
    lost = regressions(verdicts, read_baseline())
    if lost:
        print(f"\n{len(lost)} statement(s) of the baseline no longer agree:")
        print("\n".join(describe(v) for v in lost))
    if options.record:
        record(verdicts)
    return 1 if lost and not options.record else 0


if __name__ == "__main__":
    sys.exit(main())
