"""The grammar of cursor statements: DECLARE ... CURSOR FOR <query>, FETCH, MOVE and CLOSE."""

from __future__ import annotations

import string

from sqlglot.tokens import Token, TokenType

from sql.frontend.statements import CursorStatement
from storage.errors import FeatureNotSupported, SqlSyntaxError

KEYWORDS = ("declare", "fetch", "move", "close")
_DECLARE_OPTIONS = {"binary", "insensitive", "asensitive", "no", "scroll"}
_FIRST = set(string.ascii_letters + "_")
_REST = _FIRST | set(string.digits + "$")


def _is_name(token: Token) -> bool:
    """A quoted identifier, or an unquoted one in PostgreSQL's ASCII spelling."""
    if token.token_type is TokenType.IDENTIFIER:
        return bool(token.text)
    text = token.text
    return bool(text) and text[0] in _FIRST and all(c in _REST for c in text[1:])


def _is_word(token: Token) -> bool:
    return (
        token.token_type is not TokenType.IDENTIFIER
        and bool(token.text)
        and all(c in string.ascii_letters for c in token.text)
    )


def _name(token: Token) -> str:
    return token.text if token.token_type is TokenType.IDENTIFIER else token.text.lower()


def _count(direction: str | None) -> int | None:
    words = (direction or "").lower().split()
    if words and words[0] in ("forward", "next"):
        words = words[1:] if words[0] == "forward" or len(words) == 1 else words
        if words and words[0] == "next":
            words = words[1:]
    if not words:
        return 1
    if words == ["all"]:
        return None
    if len(words) == 1 and words[0].removeprefix("+").isdecimal():
        return int(words[0])
    if words[0] in ("backward", "prior", "absolute", "relative", "first", "last") or (
        words[0].startswith("-")
    ):
        raise FeatureNotSupported("cursor can only scan forward", hint="Declare it with SCROLL.")
    raise SqlSyntaxError(f'syntax error at or near "{words[0]}"')


def parse(sql: str, tokens: list[Token], rest: list[Token]) -> CursorStatement | None:
    """The cursor statement ``tokens`` spell; ``rest`` are the tokens after its keyword, read
    one by one (the postgres tokenizer reads DECLARE's and FETCH's as one opaque string).

    None for a CLOSE that names no cursor, which is left to the rest of the grammar.
    """
    verb = tokens[0].text.lower()
    if verb == "declare":
        return _declare(sql, tokens, rest)
    if verb in ("fetch", "move"):
        if not rest or not _is_name(rest[-1]):
            raise SqlSyntaxError('syntax error at or near "FETCH"')
        direction = rest[:-1]
        if direction and _is_word(direction[-1]) and direction[-1].text.lower() in ("from", "in"):
            direction = direction[:-1]
        text = sql[direction[0].start : direction[-1].end + 1] if direction else None
        return CursorStatement(kind=verb.upper(), name=_name(rest[-1]), count=_count(text))
    if len(rest) != 1 or not _is_name(rest[0]):
        return None
    name = rest[0]
    is_all = name.token_type is not TokenType.IDENTIFIER and name.text.lower() == "all"
    return CursorStatement(kind="CLOSE", name="" if is_all else _name(name))


def _declare(sql: str, tokens: list[Token], rest: list[Token]) -> CursorStatement:
    """``DECLARE name [options] CURSOR [WITH[OUT] HOLD] FOR query``: the query's text and the
    statement's run to the statement's end, comments included."""
    end = tokens[-1].end + 1
    for index in range(1, len(rest)) if rest and _is_name(rest[0]) else ():
        if not _is_word(rest[index]) or rest[index].text.lower() != "cursor":
            continue
        if not all(_is_word(t) for t in rest[1:index]):
            break
        tail = [t.text.lower() for t in rest[index + 1 :]]
        hold = False
        if len(tail) > 2 and tail[0] in ("with", "without") and tail[1] == "hold":
            hold, tail = tail[0] == "with", tail[2:]
        if len(tail) < 2 or tail[0] != "for":
            continue
        options = {t.text.lower() for t in rest[1:index]}
        if options - _DECLARE_OPTIONS:
            raise SqlSyntaxError(f'syntax error at or near "{sorted(options)[0]}"')
        if "scroll" in options and "no" not in options:
            raise FeatureNotSupported("SCROLL cursors are not supported; fetch forward only")
        if "binary" in options:
            raise FeatureNotSupported("BINARY cursors are not supported")
        query = sql[rest[-len(tail) + 1].start : end].rstrip()
        text = sql[tokens[0].start : end].strip()
        return CursorStatement(
            kind="DECLARE", name=_name(rest[0]), query=query, hold=hold, text=text
        )
    raise SqlSyntaxError('syntax error at or near "DECLARE"')
