"""Golden SQL files: parse ``statement`` / ``query`` records and run them through a real client.

A file is a list of records separated by blank lines; ``#`` starts a comment.

- ``mode postgres`` (once, anywhere) also runs the file on PostgreSQL 15.
- ``onlyif nyala`` before a record runs it on nyala only (behaviour PostgreSQL lacks).
- ``connection <name>`` runs the records after it on a second (third, ...) session of that
  name, opened on first use; ``connection default`` goes back to the first.
- ``statement ok`` / ``statement error <SQLSTATE>``, then the SQL.
- ``query [rowsort|regex]``, the SQL, a ``----`` line, then the expected rows: values in
  PostgreSQL's text format separated by tabs, ``NULL`` for null, ``(empty)`` for ''.
  ``rowsort`` compares rows sorted; ``regex`` matches each row against a regular expression.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import psycopg


@dataclass(slots=True)
class Record:
    kind: str
    sql: str
    line: int
    error: str | None = None
    mode: str = ""
    expected: list[str] = field(default_factory=list)
    only_nyala: bool = False
    connection: str = "default"


@dataclass(slots=True)
class SqlFile:
    path: Path
    records: list[Record]
    compare_postgres: bool


def parse_file(path: Path) -> SqlFile:
    lines = path.read_text().split("\n")
    records: list[Record] = []
    compare = False
    index = 0
    only_nyala = False
    connection = "default"
    while index < len(lines):
        line = lines[index].rstrip()
        index += 1
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if words == ["mode", "postgres"]:
            compare = True
            continue
        if words == ["onlyif", "nyala"]:
            only_nyala = True
            continue
        if words[0] == "connection" and len(words) == 2:
            connection = words[1]
            continue
        if words[0] not in ("statement", "query"):
            raise ValueError(f"{path}:{index}: unknown directive {line!r}")
        start = index
        body: list[str] = []
        while index < len(lines) and lines[index].strip() and lines[index].strip() != "----":
            body.append(lines[index])
            index += 1
        record = Record(
            words[0], "\n".join(body), start, only_nyala=only_nyala, connection=connection
        )
        only_nyala = False
        if words[0] == "statement":
            if words[1:2] == ["error"]:
                record.error = words[2]
            elif words[1:] != ["ok"]:
                raise ValueError(f"{path}:{start}: statement ok|error <SQLSTATE>")
        else:
            record.mode = words[1] if len(words) > 1 else ""
            if index < len(lines) and lines[index].strip() == "----":
                index += 1
                while index < len(lines) and lines[index].strip():
                    record.expected.append(lines[index].rstrip("\n"))
                    index += 1
        records.append(record)
    return SqlFile(path, records, compare)


def _text(value: bytes | None) -> str:
    if value is None:
        return "NULL"
    text = value.decode()
    return "(empty)" if text == "" else text


def _rows(cursor: psycopg.Cursor) -> list[str]:
    result = cursor.pgresult
    if result is None or result.nfields == 0:
        return []
    return [
        "\t".join(_text(result.get_value(r, c)) for c in range(result.nfields))
        for r in range(result.ntuples)
    ]


def run_file(sql_file: SqlFile, dsn: str, *, server: str) -> None:
    """Run every record on the server at ``dsn``; raise AssertionError at the first mismatch."""
    connections = {"default": psycopg.connect(dsn, autocommit=True)}
    try:
        for record in sql_file.records:
            if record.only_nyala and server != "nyala":
                continue
            conn = connections.get(record.connection)
            if conn is None:
                conn = connections[record.connection] = psycopg.connect(dsn, autocommit=True)
            _run_record(record, conn, f"{sql_file.path.name}:{record.line} on {server}")
    finally:
        for conn in connections.values():
            conn.close()


def _run_record(record: Record, conn: psycopg.Connection, where: str) -> None:
    with conn.cursor() as cursor:
        try:
            cursor.execute(record.sql.encode(), prepare=False)
        except psycopg.Error as exc:
            if record.kind == "statement" and record.error == exc.sqlstate:
                return
            raise AssertionError(f"{where}: {record.sql!r} failed: {exc.sqlstate} {exc}") from exc
        if record.error is not None:
            raise AssertionError(f"{where}: expected {record.error}, the statement succeeded")
        if record.kind == "query":
            _check_rows(record, _rows(cursor), where)


def _check_rows(record: Record, got: list[str], where: str) -> None:
    expected = record.expected
    if record.mode == "rowsort":
        got, expected = sorted(got), sorted(expected)
    if record.mode == "regex":
        ok = len(got) == len(expected) and all(
            re.fullmatch(pattern, row) for pattern, row in zip(expected, got, strict=True)
        )
    else:
        ok = got == expected
    if not ok:
        raise AssertionError(
            f"{where}: {record.sql!r}\nexpected:\n"
            + "\n".join(expected)
            + "\ngot:\n"
            + "\n".join(got)
        )
