"""COPY FROM STDIN: parse the client's text, CSV or binary stream in batches, insert them like INSERT.

The server hands over CopyData bytes as they arrive (``feed``).  They pile up
until ``batch_bytes``, then the buffer is cut at the last row boundary (a
newline outside CSV quotes, found with numpy) and the complete rows go to
pyarrow's CSV reader as strings.  Text format's backslash escapes are undone
with Arrow string kernels.  Binary tuples are split and decoded into typed
columns by ``binary_format``; an Arrow IPC stream is cut into whole record
batches by ``arrow_format`` and its columns taken as they are.  Each batch is written through the same plan
an ``INSERT INTO t (cols) SELECT ...`` uses (``sql.dml``): casts to the column
types, defaults, constraint checks and the tablet routing are shared; that plan is made
once for all sessions (``insert_plans``).  Rows go
into the statement's transaction batch by batch, so a failed COPY leaves
nothing behind when its transaction rolls back.

A bad row fails the COPY with 22P02 (a value that does not convert) or 22P04
(too many or too few columns), and the error carries PostgreSQL's context
``COPY t, line N``; the failing row of a batch is found by bisecting the
batch with the conversion query, never row by row.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from sqlglot import exp

from catalog.table import TableInfo
from sql.common.datatypes import duckdb_type
from sql.common.json_values import normalize_jsonb, parse_json
from sql.common.names import table_node
from sql.copy import arrow_format, binary_format, bytea_input
from sql.copy.insert_plans import INSERT_PLANS
from sql.dml import writes
from sql.dml.write_plan import WritePlan
from sql.execution.backends import CopyProgress
from sql.execution.executor import ScanStats
from sql.execution.runner import QueryRunner
from sql.frontend.statements import CopyStatement
from sql.planner.compiled_query import compile_query
from sql.planner.transpile import SessionFacts
from storage.errors import (
    BadCopyFileFormat,
    CharacterNotInRepertoire,
    DataException,
    DbError,
    InvalidColumnReference,
    QueryCanceled,
    UndefinedColumn,
)
from storage.transaction import Transaction
from storage.type_oids import TypeOid

BATCH_BYTES = 4 * 1024 * 1024
ARROW_BATCH_BYTES = 1024 * 1024
"""Arrow record batches written together: enough rows that a write's fixed cost is spread, few
enough that the client's next bytes arrive while the server writes (the last write waits for
CopyDone)."""
# Text format input holds no NUL byte, so NUL-led pairs can stand for an escaped
# backslash and an escaped delimiter while pyarrow splits the fields.
_BACKSLASH = "\x00B"
_DELIMITER = "\x00D"
_TEXT_ESCAPES = (
    ("\\n", "\n"),
    ("\\t", "\t"),
    ("\\r", "\r"),
    ("\\b", "\b"),
    ("\\f", "\f"),
    ("\\v", "\v"),
)
_SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_NUMERIC_ESCAPE = r"\\([0-7]|x[0-9a-fA-F])"
_ANY_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)", re.DOTALL)


class _CopySourceRunner:
    """The session's QueryRunner, reading the COPY's parsed batch where the plan reads the table."""

    def __init__(self, runner: QueryRunner, table: str) -> None:
        self._runner = runner
        self._table = table
        self.rows: pa.Table | None = None

    def run_to_table(
        self,
        compiled: Any,
        txn: Transaction,
        params: list[Any] | None = None,
        now: Any = None,
        overrides: dict[str, pa.Table] | None = None,
        stats: ScanStats | None = None,
    ) -> pa.Table | None:
        assert self.rows is not None, "a batch is set before the plan runs"
        # A CHECK query reads the rows about to be written, not the parsed batch.
        merged = {self._table: self.rows, **(overrides or {})}
        return self._runner.run_to_table(compiled, txn, params, now, merged, stats)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runner, name)


class CopyIn:
    """One running COPY FROM STDIN: takes bytes, writes rows, reports ``COPY n``."""

    def __init__(
        self,
        statement: CopyStatement,
        table: TableInfo,
        runner: QueryRunner,
        facts: SessionFacts,
        txn: Transaction,
        now: Any,
        check_cancel: Callable[[], None],
        on_done: Callable[[], None] | None = None,
        on_error: Callable[[], None] | None = None,
        batch_bytes: int = BATCH_BYTES,
        progress: CopyProgress | None = None,
    ) -> None:
        self.statement = statement
        self.options = statement.options
        self.table = table
        self.column_count = 0
        self._txn = txn
        self._now = now
        self._check_cancel = check_cancel
        self._on_done = on_done
        self._on_error = on_error
        self._batch_bytes = batch_bytes
        self._progress = progress if progress is not None else CopyProgress(0, "", "")
        self.on_finished: Callable[[int], None] | None = None
        """Called with the rows written once the COPY has succeeded (pg_stat_statements)."""
        self._buffer = bytearray()
        self._rows_written = 0
        self._line = 0
        self._header_pending = self.options.header or self.options.is_binary
        self._saw_trailer = False
        self._arrow = (
            arrow_format.ArrowStreamCutter(min(batch_bytes, ARROW_BATCH_BYTES))
            if self.options.is_arrow
            else None
        )
        names = statement.columns
        if names is None:
            columns = list(table.columns)
        else:
            columns = []
            for name in names:
                column = table.schema.find(name)
                if column is None:
                    raise UndefinedColumn(
                        f'column "{name}" of relation "{table.name}" does not exist'
                    )
                columns.append(column)
        self.columns = columns
        self.column_count = len(columns)
        self._names = [c.name for c in columns]
        not_null = self.options.force_not_null or ()
        for name in not_null:
            if name not in self._names:
                raise InvalidColumnReference(
                    f'FORCE_NOT_NULL column "{name}" not referenced by COPY'
                )
        self._force_not_null = [n in not_null for n in self._names]
        force_null = self.options.force_null or ()
        for name in force_null:
            if name not in self._names:
                raise InvalidColumnReference(f'FORCE_NULL column "{name}" not referenced by COPY')
        self._force_null = [n in force_null for n in self._names]
        self._source = _CopySourceRunner(runner, table.name)
        self._runner = runner
        self._facts = facts
        self._plan = INSERT_PLANS.plan(table, tuple(self._names), runner, facts, self._plan_insert)

    def _plan_insert(self) -> WritePlan:
        """The ``INSERT INTO t (cols) SELECT cols FROM t`` the batches go through, planned."""
        names, table_name = self._names, self.table.name
        # exp.insert takes a Schema (the table and its column list) too; its hint names Table.
        insert = exp.insert(
            exp.select(*[exp.column(n, quoted=True) for n in names]).from_(table_node(table_name)),
            exp.Schema(  # type: ignore[arg-type]
                this=table_node(table_name),
                expressions=[exp.to_identifier(n, quoted=True) for n in names],
            ),
        )
        # COPY writes identity columns as given, as OVERRIDING SYSTEM VALUE does (PostgreSQL).
        insert.set("overriding", "SYSTEM")
        return writes.plan_insert(insert, self._runner, self._facts, [])

    # -- the stream -------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Take CopyData bytes; complete rows are written once a batch's worth has arrived."""
        self._progress.bytes_processed += len(data)
        if self._arrow is not None:
            self._guarded(self._load_arrow, data)
            return
        self._buffer += data
        if len(self._buffer) >= self._batch_bytes and self.options.is_binary:
            self._guarded(self._load_binary, False)
        elif len(self._buffer) >= self._batch_bytes:
            cut = self._row_boundary(self._buffer)
            if cut > 0:
                chunk = bytes(self._buffer[:cut])
                del self._buffer[:cut]
                self._guarded(self._load, chunk)

    def finish(self) -> str:
        """CopyDone: write what is left, end an autocommit transaction; return the command tag."""
        if self._arrow is not None:
            self._guarded(self._finish_arrow)
        elif self.options.is_binary:
            self._guarded(self._load_binary, True)
        chunk = b"" if self.options.is_binary else bytes(self._buffer)
        self._buffer.clear()
        chunk = _strip_end_marker(chunk)
        if chunk and self.options.is_csv and self._inside_quotes(chunk):
            complete = self._row_boundary(chunk)
            self._guarded(self._load, chunk[:complete])
            error = BadCopyFileFormat("unterminated CSV quoted field")
            text = chunk[complete:].decode("utf-8", "replace")
            error.add_context(f'COPY {self.table.name}, line {self._line + 1}: "{text}"')
            self.abort()
            raise error
        if chunk:
            if not chunk.endswith(b"\n"):
                chunk += b"\n"
            self._guarded(self._load, chunk)
        if self._on_done is not None:
            self._guarded(self._on_done)
        self._progress.running = False
        if self.on_finished is not None:
            self.on_finished(self._rows_written)
        return f"COPY {self._rows_written}"

    def fail(self, message: str) -> None:
        """CopyFail from the client: the COPY ends with 57014, as in PostgreSQL."""
        self.abort()
        raise QueryCanceled(f"COPY from stdin failed: {message}")

    def abort(self) -> None:
        """Give up (client error, protocol error, lost connection): nothing of this COPY stays."""
        self._progress.running = False
        self._buffer.clear()
        if self._on_error is not None:
            on_error, self._on_error = self._on_error, None
            on_error()

    def _guarded(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except BaseException:
            self.abort()
            raise

    def _row_boundary(self, data: bytes | bytearray) -> int:
        """Bytes at the start of ``data`` that hold whole rows (0: no row has ended yet)."""
        if not self.options.is_csv:
            return data.rfind(b"\n") + 1
        raw = np.frombuffer(data, dtype=np.uint8)
        outside = (np.cumsum(self._quotes(raw)) & 1) == 0
        ends = np.flatnonzero((raw == ord("\n")) & outside)
        return int(ends[-1]) + 1 if ends.size else 0

    def _quotes(self, raw: np.ndarray) -> np.ndarray:
        """Where CSV quote characters open or close a quoted field (escaped ones left out)."""
        quote = ord(self.options.quote or '"')
        escape = ord(self.options.escape or '"')
        quotes = raw == quote
        if escape != quote:
            escaped = np.zeros_like(quotes)
            escaped[1:] = raw[:-1] == escape
            quotes &= ~escaped
        return quotes

    def _inside_quotes(self, chunk: bytes) -> bool:
        return bool(int(self._quotes(np.frombuffer(chunk, dtype=np.uint8)).sum()) & 1)

    # -- one batch --------------------------------------------------------------------------

    def _load(self, chunk: bytes) -> None:
        self._check_cancel()
        if not chunk:
            return
        skip = 0
        if self._header_pending and self.options.header_match:
            self._header_pending = False
            rows = self._parse(chunk, 0)
            self._check_header(rows.slice(0, 1))
            self._line += 1
            self._write(rows.slice(1))
            return
        if self._header_pending:
            self._header_pending = False
            skip = 1
            self._line += 1
        self._write(self._parse(chunk, skip))

    def _check_header(self, header: pa.Table) -> None:
        """HEADER MATCH: the header line must name the COPY's columns in order (22P04)."""
        values = [
            header.column(name)[0].as_py() if header.num_rows else None for name in self._names
        ]
        for index, (name, value) in enumerate(zip(self._names, values, strict=True)):
            if value == name:
                continue
            got = f'null value ("{self.options.null}")' if value is None else f'"{value}"'
            error = BadCopyFileFormat(
                f'column name mismatch in header line field {index + 1}: got {got}, expected "{name}"'
            )
            error.add_context(f"COPY {self.table.name}, line 1")
            raise error

    def _write(self, rows: pa.Table) -> None:
        """Insert one batch through the INSERT plan; a conversion error names its line."""
        if rows.num_rows == 0:
            return
        rows = self._normalized_documents(rows)
        self._source.rows = rows
        try:
            count, _ = writes.execute_write(self._plan, self._source, self._txn, [], self._now)
        except DataException as exc:
            raise self._locate(exc, rows) from exc
        finally:
            self._source.rows = None
        self._rows_written += count
        self._progress.tuples_processed += count
        self._line += rows.num_rows

    def _normalized_documents(self, rows: pa.Table) -> pa.Table:
        """json fields checked and jsonb ones normalised, as stored documents are: the INSERT
        reads these rows as it reads stored ones."""
        for column in self.columns:
            if column.type.text_type not in ("json", "jsonb"):
                continue
            convert = normalize_jsonb if column.type.text_type == "jsonb" else _checked_json
            index = rows.column_names.index(column.name)
            values = rows.column(index).cast(pa.string()).to_pylist()
            out = []
            # Per value: no Arrow kernel parses JSON.
            for row_idx, value in enumerate(values):
                try:
                    out.append(None if value is None else convert(value))
                except DataException as exc:
                    exc.add_context(
                        f"COPY {self.table.name}, line {self._line + row_idx + 1}, "
                        f'column {column.name}: "{value}"'
                    )
                    raise
            rows = rows.set_column(index, column.name, pa.array(out, pa.string()))
        return rows

    def _load_binary(self, is_final: bool) -> None:
        """Decode and write the complete binary tuples buffered so far."""
        self._check_cancel()
        if self._saw_trailer:
            self._buffer.clear()
            return
        data = bytes(self._buffer)
        start = 0
        if self._header_pending:
            header = binary_format.header_length(data)
            if header is None:
                if is_final:
                    raise BadCopyFileFormat("COPY file signature not recognized")
                return
            self._header_pending = False
            start = header
        try:
            fields = binary_format.split_tuples(data, start, self.column_count, 0)
            arrays = [
                binary_format.decode_column(
                    data, fields.starts[:, i], fields.lengths[:, i], column.type.pg_oid
                )
                for i, column in enumerate(self.columns)
            ]
        except DbError as exc:
            line = exc.copy_line
            if line is not None:
                exc.add_context(f"COPY {self.table.name}, line {self._line + line}")
            raise
        del self._buffer[: fields.consumed]
        if fields.rows:
            self._write(pa.Table.from_arrays(arrays, names=self._names))
        if fields.saw_trailer:
            self._saw_trailer = True
            self._buffer.clear()
        elif is_final and self._buffer:
            error = BadCopyFileFormat("unexpected EOF in COPY data")
            error.add_context(f"COPY {self.table.name}, line {self._line + 1}")
            raise error

    def _load_arrow(self, data: bytes) -> None:
        """Write the record batches ``data`` completes; columns match the COPY's by position."""
        self._check_cancel()
        assert self._arrow is not None, "an Arrow COPY has a cutter"
        try:
            rows = self._arrow.feed(data)
        except DbError as exc:
            exc.add_context(f"COPY {self.table.name}")
            raise
        self._write_arrow(rows)

    def _finish_arrow(self) -> None:
        assert self._arrow is not None, "an Arrow COPY has a cutter"
        try:
            rows = self._arrow.finish()
        except DbError as exc:
            exc.add_context(f"COPY {self.table.name}")
            raise
        self._write_arrow(rows)

    def _write_arrow(self, rows: pa.Table | None) -> None:
        if rows is None:
            return
        if rows.num_columns != self.column_count:
            error = BadCopyFileFormat(
                f"row field count is {rows.num_columns}, expected {self.column_count}"
            )
            error.add_context(f"COPY {self.table.name}, line {self._line + 1}")
            raise error
        columns = [
            column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column
            for column in rows.columns
        ]
        self._write(pa.Table.from_arrays(columns, names=self._names))

    def _parse(self, chunk: bytes, skip_rows: int) -> pa.Table:
        options = self.options
        invalid: list[Any] = []

        def on_invalid(row: Any) -> str:
            invalid.append(row)
            return "error"

        parse = pacsv.ParseOptions(
            delimiter=options.delimiter,
            quote_char=options.quote if options.is_csv else False,
            double_quote=options.is_csv and options.escape == options.quote,
            escape_char=(
                options.escape if options.is_csv and options.escape != options.quote else False
            ),
            newlines_in_values=options.is_csv,
            ignore_empty_lines=False,
            invalid_row_handler=on_invalid,
        )
        read = pacsv.ReadOptions(
            column_names=self._names or ["?column?"],
            skip_rows=skip_rows,
            use_threads=False,
            block_size=max(len(chunk) + 1, 1 << 20),
        )
        convert = pacsv.ConvertOptions(
            column_types={name: pa.string() for name in self._names},
            null_values=[options.null or ""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        )
        if b"\x00" in chunk:
            error: DbError = CharacterNotInRepertoire(
                'invalid byte sequence for encoding "UTF8": 0x00'
            )
            error.add_context(
                f"COPY {self.table.name}, line {self._line + chunk[: chunk.index(0)].count(10) + 1}"
            )
            raise error
        if not options.is_csv:
            delimiter = (options.delimiter or "\t").encode()
            chunk = chunk.replace(b"\\\\", _BACKSLASH.encode())
            chunk = chunk.replace(b"\\" + delimiter, _DELIMITER.encode())
        try:
            table = pacsv.read_csv(io.BytesIO(chunk), read, parse, convert)
        except pa.ArrowInvalid as exc:
            raise self._parse_error(exc, invalid) from exc
        columns = []
        for index, name in enumerate(self._names):
            column = table.column(name).combine_chunks()
            if not options.is_csv:
                column = _unescape_text(column, options.delimiter or "\t")
            else:
                if self._force_not_null[index]:
                    column = pc.fill_null(column, options.null or "")
                if self._force_null[index]:
                    matches = pc.fill_null(pc.equal(column, options.null or ""), False)
                    column = pc.if_else(matches, pa.scalar(None, column.type), column)
            if self.columns[index].type.pg_oid == TypeOid.BYTEA:
                column = self._decoded_bytea(column)
            columns.append(column)
        return pa.Table.from_arrays(columns, names=self._names)

    def _decoded_bytea(self, column: pa.Array) -> pa.Array:
        try:
            return bytea_input.decode(column)
        except DbError as exc:
            exc.add_context(f"COPY {self.table.name}")
            raise

    def _parse_error(self, exc: pa.ArrowInvalid, invalid: list[Any]) -> DbError:
        message = str(exc)
        if invalid:
            row = invalid[0]
            line = self._line + (row.number or 1)
            if row.actual_columns > row.expected_columns:
                error: DbError = BadCopyFileFormat("extra data after last expected column")
            else:
                missing = self._names[min(row.actual_columns, len(self._names) - 1)]
                error = BadCopyFileFormat(f'missing data for column "{missing}"')
            error.add_context(f'COPY {self.table.name}, line {line}: "{row.text}"')
            return error
        if "UTF8" in message.upper() or "UTF-8" in message.upper():
            error = CharacterNotInRepertoire('invalid byte sequence for encoding "UTF8"')
        elif "quote" in message.lower():
            error = BadCopyFileFormat("unterminated CSV quoted field")
        else:
            error = BadCopyFileFormat(message.removeprefix("CSV parse error: "))
        error.add_context(f"COPY {self.table.name}, line {self._line + 1}")
        return error

    def _locate(self, exc: DataException, strings: pa.Table) -> DataException:
        """Name the first row of ``strings`` that fails to convert (bisecting the batch), and its column."""
        if self._converts(strings):
            exc.add_context(f"COPY {self.table.name}")
            return exc
        low, high = 0, strings.num_rows
        while high - low > 1:
            middle = (low + high) // 2
            if self._converts(strings.slice(low, middle - low)):
                low = middle
            else:
                high = middle
        context = f"COPY {self.table.name}, line {self._line + low + 1}"
        bad = self._bad_column(strings.slice(low, 1))
        if bad is not None:
            name, value = bad
            context += (
                f', column {name}: "{value}"'
                if value is not None
                else f", column {name}: null input"
            )
        exc.add_context(context)
        return exc

    def _converts(self, rows: pa.Table) -> bool:
        self._source.rows = rows
        try:
            self._source.run_to_table(self._plan.source, self._txn, [], self._now)
        except DataException:
            return False
        finally:
            self._source.rows = None
        return True

    def _bad_column(self, row: pa.Table) -> tuple[str, str | None] | None:
        """The first column whose value in the one-row ``row`` does not convert to its type."""
        for column in self.columns:
            cast = exp.Cast(
                this=exp.column(column.name, quoted=True),
                to=exp.DataType.build(duckdb_type(column.type), dialect="duckdb"),
            )
            select = exp.select(cast).from_(table_node(self.table.name))
            compiled = compile_query(self._runner.bind(select), self._facts)
            single = pa.Table.from_arrays([row.column(column.name)], names=[column.name])
            try:
                self._runner.run_to_table(
                    compiled, self._txn, [], self._now, {self.table.name: single}
                )
            except DataException:
                return column.name, row.column(column.name)[0].as_py()
        return None


def _checked_json(text: str) -> str:
    parse_json(text)
    return text


def _strip_end_marker(chunk: bytes) -> bytes:
    r"""Drop the ``\.`` end-of-data line old clients send as the last line."""
    trimmed = chunk.rstrip(b"\r\n")
    if trimmed == b"\\.":
        return b""
    if trimmed.endswith(b"\n\\."):
        return trimmed[:-2]
    return chunk


def _unescape_text(column: pa.Array, delimiter: str) -> pa.Array:
    r"""Undo text format's backslash escapes (``\\``, ``\n``, ``\t``, ``\X`` ...), vectorised.

    Octal and hex escapes (``\053``, ``\x2b``) cannot be written as string
    kernels; the few values holding one are decoded one by one.
    """
    if len(column) == 0:
        return column
    has_escape = pc.or_(pc.match_substring(column, "\\"), pc.match_substring(column, "\x00"))
    if not pc.any(has_escape).as_py():
        return column
    fast = column
    for escaped, plain in _TEXT_ESCAPES:
        fast = pc.replace_substring(fast, escaped, plain)
    fast = pc.replace_substring_regex(fast, r"\\(.)", r"\1")
    fast = pc.replace_substring(fast, _DELIMITER, delimiter)
    fast = pc.replace_substring(fast, _BACKSLASH, "\\")
    numeric = pc.fill_null(pc.match_substring_regex(column, _NUMERIC_ESCAPE), False)
    if pc.any(numeric).as_py():
        slow = [_unescape_value(v, delimiter) for v in column.filter(numeric).to_pylist()]
        fast = pc.replace_with_mask(fast, numeric, pa.array(slow, column.type))
    return fast


def _escape_value(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] == "x" and len(code) > 1:
        return chr(int(code[1:], 16))
    if code[0] in "01234567":
        return chr(int(code, 8))
    return _SIMPLE.get(code, code)


def _unescape_value(value: str, delimiter: str) -> str:
    value = _ANY_ESCAPE.sub(_escape_value, value)
    return value.replace(_DELIMITER, delimiter).replace(_BACKSLASH, "\\")
