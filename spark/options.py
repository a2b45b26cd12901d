"""The data source's options, read once on the driver and carried to every task."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Options:
    """Where the server is, what to read or write, and at which instant.

    ``table`` or ``query`` names the rows (a query is read as one partition);
    ``as_of`` (or its synonym ``snapshot``) is the instant every task reads at,
    a ``timestamptz`` literal; unset, it is the server's ``now()`` when the job
    is planned.  ``save_mode`` gives writes the modes Spark does not pass to a
    Python data source (errorifexists, ignore); ``upsert`` makes an append
    replace the rows whose primary key the table already holds.
    """

    host: str = "127.0.0.1"
    port: int = 5433
    user: str = "nyala"
    password: str | None = None
    dbname: str = "nyala"
    sslmode: str | None = None
    table: str | None = None
    query: str | None = None
    as_of: str | None = None
    save_mode: str = "append"
    upsert: bool = False
    """Appended rows whose primary key the table holds replace that row (ON CONFLICT DO UPDATE)."""
    split_rows: int = 0
    """A tablet of more rows is read as key ranges of about this many rows (0: never split;
    sizing the tablets costs the driver a pass over every tablet's first key column)."""
    fail_after_prepare: tuple[int, ...] = ()
    """Partitions whose first write attempt fails after PREPARE (fault-injection tests)."""

    @classmethod
    def parse(cls, raw: Mapping[str, str]) -> Options:
        values = {k.lower(): v for k, v in raw.items()}
        table, query = values.get("table") or values.get("dbtable"), values.get("query")
        if (table is None) == (query is None):
            raise ValueError('the nyala data source takes exactly one of "table" and "query"')
        as_of, snapshot = values.get("as_of"), values.get("snapshot")
        if as_of is not None and snapshot is not None and as_of != snapshot:
            raise ValueError('"as_of" and "snapshot" name the same instant; give one of them')
        return cls(
            host=values.get("host", cls.host),
            port=int(values.get("port", cls.port)),
            user=values.get("user", cls.user),
            password=values.get("password"),
            dbname=values.get("dbname", values.get("database", cls.dbname)),
            sslmode=values.get("sslmode"),
            table=table,
            query=query,
            as_of=as_of or snapshot,
            save_mode=_save_mode(values.get("save_mode", "append")),
            upsert=_flag("upsert", values.get("upsert", "false")),
            split_rows=int(values.get("split_rows", cls.split_rows)),
            fail_after_prepare=tuple(
                int(p) for p in values.get("fail_after_prepare", "").split(",") if p.strip()
            ),
        )

    def connection_kwargs(self) -> dict[str, object]:
        kwargs: dict[str, object] = {
            "host": self.host, "port": self.port, "user": self.user, "dbname": self.dbname,
        }  # fmt: skip
        if self.password is not None:
            kwargs["password"] = self.password
        if self.sslmode is not None:
            kwargs["sslmode"] = self.sslmode
        return kwargs

    def relation(self) -> str:
        """The FROM item the rows come from: the quoted table, or the query as a subquery."""
        if self.query is not None:
            return f"({self.query}) AS q"
        assert self.table is not None, "a table or a query"
        return ".".join(quote_identifier(part) for part in self.table.split("."))


def _save_mode(value: str) -> str:
    mode = value.lower()
    if mode not in ("append", "errorifexists", "ignore"):
        raise ValueError('"save_mode" is append, errorifexists or ignore (overwrite: .mode)')
    return mode


def _flag(name: str, value: str) -> bool:
    if value.lower() in ("true", "on", "1", "yes"):
        return True
    if value.lower() in ("false", "off", "0", "no"):
        return False
    raise ValueError(f'"{name}" is true or false, not {value!r}')


def quote_identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
