"""Time travel: the storage snapshot a ``FOR SYSTEM_TIME AS OF '<timestamptz>'`` table reference reads.

sqlglot parses the clause into the table node's ``version`` argument; the
scan of that table then reads at the hybrid timestamp of the given instant
(``ScanSpec.snapshot``), through UNDO records and MemRowSet chains, and
storage refuses instants older than its history window with 72000.  A
literal without a time zone is taken as UTC.  The session setting
``nyala.read_timestamp`` pins every table reference of a session to one
such instant (``snapshot_at``), for clients that cannot write the clause.
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp

from storage.errors import FeatureNotSupported, InvalidDatetimeFormat
from storage.timestamp import Timestamp, from_datetime, to_datetime


def snapshot_of(node: exp.Table) -> int | None:
    """The snapshot timestamp a table reference asks for, or None for the current one."""
    version = node.args.get("version")
    if version is None:
        return None
    kind = str(version.args.get("kind", "")).upper()
    this = str(version.this).upper()
    literal = version.expression
    if (
        kind != "AS OF"
        or this != "TIMESTAMP"
        or not isinstance(literal, exp.Literal)
        or not literal.is_string
    ):
        raise FeatureNotSupported(
            "only FOR SYSTEM_TIME AS OF '<timestamp with time zone>' is supported"
        )
    return snapshot_at(literal.this)


def snapshot_at(text: str) -> int:
    """The snapshot timestamp of a ``timestamptz`` literal (UTC when it names no zone)."""
    text = text.strip()
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise InvalidDatetimeFormat(
            f'invalid input syntax for type timestamp with time zone: "{text}"'
        ) from None
    return int(from_datetime(when))


def canonical_instant(text: str) -> str:
    """A ``timestamptz`` literal as PostgreSQL prints it in UTC (22007 if it is not one)."""
    instant = to_datetime(Timestamp(snapshot_at(text)))
    return instant.strftime("%Y-%m-%d %H:%M:%S.%f").rstrip("0").rstrip(".") + "+00"
