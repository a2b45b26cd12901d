"""Encode a statement's Result as its protocol answers: notices, RowDescription, completion."""

from __future__ import annotations

import functools

from server import codec, pgtypes
from server import messages as m
from server.errors import notice_response
from sql.common.result import Result, ResultColumn


def notices(result: Result) -> bytes:
    """NoticeResponse messages for the notices a statement raised, in order."""
    return b"".join(codec.encode(notice_response(notice)) for notice in result.notices)


def no_rows_answer(result: Result) -> bytes:
    """EmptyQueryResponse, or the CommandComplete of a statement that returns no rows."""
    if result.is_empty_query:
        return _EMPTY_QUERY_RESPONSE
    drain(result)
    return command_complete(result.command_tag or "")


@functools.lru_cache(maxsize=256)
def command_complete(tag: str) -> bytes:
    """CommandComplete framed (the same few tags come back statement after statement)."""
    return codec.encode(m.CommandComplete(tag))


_EMPTY_QUERY_RESPONSE = codec.encode(m.EmptyQueryResponse())


def row_description(
    columns: tuple[ResultColumn, ...], formats: tuple[int, ...]
) -> m.RowDescription:
    """RowDescription for the columns, each with the format the client asked for."""
    return m.RowDescription(
        tuple(
            m.FieldDescription(
                c.name,
                c.table_oid,
                c.attnum,
                c.type_oid,
                pgtypes.type_size(c.type_oid),
                c.typmod,
                fmt,
            )
            for c, fmt in zip(columns, formats, strict=True)
        )
    )


def drain(result: Result) -> None:
    """Run a statement's row stream to its end, so the statement finishes."""
    for _ in result.batches:
        pass
