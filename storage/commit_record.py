"""CommitRecord: the WAL payload for one committed transaction, and its byte layout.

A transaction writes exactly one WAL record, at commit, holding its commit
timestamp and every write it made, so replay never sees part of a
transaction and never sees an uncommitted one.

======  ========  ===========================================================
offset  size      field (integers little-endian)
======  ========  ===========================================================
0       1         record type: 1 = COMMIT
1       8         commit timestamp, u64 (hybrid time)
9       4         number of operations N, u32
13      ...       N operations, back to back:
+0      8         tablet id, u64
+8      1         op kind: 1 = INSERT, 2 = UPDATE, 3 = DELETE, 4 = PREPARED, 5 = CATALOG,
                  6 = DOCUMENTS
+9      4         length L of the Arrow data, u32
+13     L         the op's RecordBatch as an Arrow IPC stream (schema + one batch)
======  ========  ===========================================================

Batches keep the fields the write was given, named ``str(column_id)``:
every column for INSERT, key plus changed columns for UPDATE, key columns
for DELETE.  PREPARED is not a write: COMMIT PREPARED adds it, on tablet 0
(no tablet's id), its batch holding the gid, so recovery knows the prepared
transaction committed (``storage.prepared``); replay skips it.  CATALOG is
not a write either: a transaction that changed the catalog carries the new
catalog document (one ``document`` binary value) on tablet 0, so the catalog
change commits atomically with the rows; replay keeps the last one for the
catalog to compare with its file (``StorageEngine.replayed_catalog``).
DOCUMENTS is not a write either: the other documents a transaction replaces
(``roles.json``, ``privileges.json``), one row each of ``name`` and
``document``, so its role and privilege changes commit atomically with its
rows and DDL; replay keeps the last one per name
(``StorageEngine.replayed_documents``), and each store compares it with its
file.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

import pyarrow as pa

from storage.data_type import TabletId
from storage.errors import DataCorrupted
from storage.row_lock_mode import RowLockMode
from storage.timestamp import Timestamp

COMMIT_RECORD_TYPE = 1
_HEADER = struct.Struct("<BQI")
HEADER_BYTES = _HEADER.size
_OP_HEADER = struct.Struct("<QBI")


class OpKind(enum.IntEnum):
    INSERT = 1
    UPDATE = 2
    DELETE = 3
    PREPARED = 4
    CATALOG = 5
    ROW_LOCK = 6
    """Rows a prepared transaction holds locked without writing them (``row_lock_op``): kept
    in its prepared file only, never in a WAL record."""
    DOCUMENTS = 7


@dataclass(frozen=True, slots=True)
class WriteOp:
    """One write of a transaction: a batch applied to one tablet."""

    tablet_id: TabletId
    kind: OpKind
    batch: pa.RecordBatch


@dataclass(frozen=True, slots=True)
class CommitRecord:
    commit_ts: Timestamp
    ops: tuple[WriteOp, ...]


_IPC_OPTIONS = pa.ipc.IpcWriteOptions()
"""pyarrow's defaults, given so that a stream writer does not read two environment variables
per record (a tenth of a one-row UPDATE's commit)."""

_END_OF_STREAM = b"\xff\xff\xff\xff\x00\x00\x00\x00"
"""An IPC stream's end marker: a continuation token and a zero-length message."""


def encode_ops(ops: list[WriteOp] | tuple[WriteOp, ...]) -> bytes:
    """Encode the operations part of a record (done before the commit timestamp is known)."""
    return b"".join(encode_op_parts(ops))


def encode_op_parts(ops: list[WriteOp] | tuple[WriteOp, ...]) -> list[bytes | pa.Buffer]:
    """``encode_ops``' bytes in pieces, each IPC stream left in its Arrow buffer, so a caller
    joining them with more pieces copies a large write set once."""
    parts: list[bytes | pa.Buffer] = []
    for op in ops:
        parts.extend(_stream_parts(op))
    return parts


def _stream_parts(op: WriteOp) -> list[bytes | pa.Buffer]:
    """One op's header and IPC stream.  A batch without dictionaries is its schema message,
    its batch message and the end marker, byte for byte what a stream writer writes, built
    without the writer's Python objects (a third of a one-row write's encoding)."""
    batch = op.batch
    schema = batch.schema
    head = _schema_message(schema)
    if head is None:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, schema, options=_IPC_OPTIONS) as writer:
            writer.write_batch(batch)
        data = sink.getvalue()
        return [_OP_HEADER.pack(op.tablet_id, op.kind, data.size), data]
    body = batch.serialize()
    size = head.size + body.size + len(_END_OF_STREAM)
    return [_OP_HEADER.pack(op.tablet_id, op.kind, size), head, body, _END_OF_STREAM]


_RECENT_SCHEMAS = 16
_schema_messages: tuple[tuple[pa.Schema, pa.Buffer | None], ...] = ()
"""The IPC schema messages of the schemas written last (None for one with dictionaries):
a write by key logs the same few schemas again and again, and making the message and
looking for dictionaries costs more than the batch's own message."""


def _schema_message(schema: pa.Schema) -> pa.Buffer | None:
    """``schema.serialize()``, or None when a field is dictionary-encoded."""
    global _schema_messages
    known = _schema_messages
    for seen, message in known:
        if seen is schema or seen.equals(schema, check_metadata=True):
            return message
    made = None if any(pa.types.is_dictionary(t) for t in schema.types) else schema.serialize()
    _schema_messages = ((schema, made), *known[: _RECENT_SCHEMAS - 1])
    return made


_LOCK_MODE = b"nyala.row_lock_mode"


def row_lock_op(tablet_id: TabletId, keys: pa.RecordBatch, mode: RowLockMode) -> WriteOp:
    """A ROW_LOCK record of the rows ``keys`` names, locked in ``mode``."""
    batch = keys.replace_schema_metadata({_LOCK_MODE: mode.name.encode()})
    return WriteOp(tablet_id, OpKind.ROW_LOCK, batch)


def row_lock_mode(op: WriteOp) -> RowLockMode:
    """The mode a ROW_LOCK record's rows are locked in."""
    metadata = op.batch.schema.metadata or {}
    return RowLockMode[metadata[_LOCK_MODE].decode()]


def catalog_op(document: bytes) -> WriteOp:
    """The CATALOG marker carrying a catalog document (see the module docstring)."""
    batch = pa.record_batch([pa.array([document], pa.binary())], names=["document"])
    return WriteOp(TabletId(0), OpKind.CATALOG, batch)


def catalog_document(op: WriteOp) -> bytes:
    """The document a CATALOG marker carries."""
    value: bytes = op.batch.column(0)[0].as_py()
    return value


def documents_op(documents: dict[str, bytes]) -> WriteOp:
    """The DOCUMENTS marker carrying ``documents`` by name (see the module docstring)."""
    batch = pa.record_batch(
        [pa.array(list(documents), pa.string()), pa.array(list(documents.values()), pa.binary())],
        names=["name", "document"],
    )
    return WriteOp(TabletId(0), OpKind.DOCUMENTS, batch)


def documents_of(op: WriteOp) -> dict[str, bytes]:
    """The documents a DOCUMENTS marker carries, by name."""
    names = op.batch.column(0).to_pylist()
    values = op.batch.column(1).to_pylist()
    return dict(zip(names, values, strict=True))


def encode_header(commit_ts: Timestamp, num_ops: int) -> bytes:
    return _HEADER.pack(COMMIT_RECORD_TYPE, commit_ts, num_ops)


def encode(record: CommitRecord) -> bytes:
    return encode_header(record.commit_ts, len(record.ops)) + encode_ops(record.ops)


def commit_ts_of(payload: bytes) -> Timestamp:
    """The commit timestamp of an encoded record, without decoding its writes."""
    return Timestamp(_HEADER.unpack_from(payload, 0)[1])


def decode(payload: bytes) -> CommitRecord:
    """Decode a WAL payload written by ``encode``; DataCorrupted if it is not one."""
    try:
        record_type, commit_ts, num_ops = _HEADER.unpack_from(payload, 0)
        if record_type != COMMIT_RECORD_TYPE:
            raise DataCorrupted(f"unknown WAL record type {record_type}")
        pos = _HEADER.size
        ops = []
        for _ in range(num_ops):
            tablet_id, kind, length = _OP_HEADER.unpack_from(payload, pos)
            pos += _OP_HEADER.size
            reader = pa.ipc.open_stream(pa.py_buffer(payload[pos : pos + length]))
            batches = list(reader)
            batch = (
                batches[0]
                if len(batches) == 1
                else pa.Table.from_batches(batches, reader.schema).combine_chunks().to_batches()[0]
            )
            ops.append(WriteOp(TabletId(tablet_id), OpKind(kind), batch))
            pos += length
    except (struct.error, pa.ArrowInvalid, ValueError, IndexError) as exc:
        raise DataCorrupted(f"unreadable WAL commit record: {exc}") from exc
    return CommitRecord(Timestamp(commit_ts), tuple(ops))
