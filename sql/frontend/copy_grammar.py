"""The grammar of COPY: its target, direction and options, in both PostgreSQL option syntaxes.

``COPY t [(cols)] FROM STDIN [[WITH] options]`` and ``COPY t [(cols)] | (query)
TO STDOUT [[WITH] options]``.  Options come either parenthesised, as
PostgreSQL 9.0 and later write them (``(FORMAT csv, HEADER true, FORCE_QUOTE
(a, b))``), or in the legacy keyword form psql's ``\\copy`` and old scripts use
(``CSV HEADER DELIMITER ';' FORCE QUOTE a, b``).  Validation follows
PostgreSQL 15's ``ProcessCopyOptions``, with its messages and SQLSTATEs.
Files and programs on the server (``FROM 'file'``, ``PROGRAM``) are refused.
``FORMAT arrow`` is nyala's own: an Arrow IPC stream, which takes no text options.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from sql.frontend.statements import CopyOptions, CopyStatement
from storage.errors import (
    FeatureNotSupported,
    InsufficientPrivilege,
    InvalidParameterValue,
    SqlSyntaxError,
)

FORMATS = ("text", "csv", "binary", "arrow")
_STRING_TOKENS = (TokenType.STRING, TokenType.BYTE_STRING, TokenType.NATIONAL_STRING)
_TRUE = ("true", "on", "1", "yes")
_FALSE = ("false", "off", "0", "no")


class _Tokens:
    """A cursor over one statement's tokens."""

    def __init__(self, sql: str, tokens: list[Token]) -> None:
        self.sql = sql
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def next(self) -> Token:
        token = self.peek()
        if token is None:
            raise SqlSyntaxError("syntax error at end of input", position=len(self.sql) + 1)
        self.pos += 1
        return token

    def word(self) -> str | None:
        """The next token as a lower-case keyword, or None if it is not a bare word."""
        token = self.peek()
        if token is None or token.token_type in _STRING_TOKENS:
            return None
        if token.token_type is TokenType.IDENTIFIER:
            return None
        return token.text.lower()

    def accept(self, *words: str) -> str | None:
        word = self.word()
        if word is not None and word in words:
            self.pos += 1
            return word
        return None

    def expect(self, token_type: TokenType) -> Token:
        token = self.next()
        if token.token_type is not token_type:
            raise _syntax_error(self.sql, token)
        return token

    def at(self, token_type: TokenType) -> bool:
        token = self.peek()
        return token is not None and token.token_type is token_type


def _syntax_error(sql: str, token: Token) -> SqlSyntaxError:
    return SqlSyntaxError(f'syntax error at or near "{token.text}"', position=token.start + 1)


def _name(token: Token, sql: str) -> str:
    if token.token_type is TokenType.IDENTIFIER:
        return token.text
    if token.token_type in _STRING_TOKENS or token.token_type in (
        TokenType.L_PAREN,
        TokenType.R_PAREN,
        TokenType.COMMA,
        TokenType.NUMBER,
    ):
        raise _syntax_error(sql, token)
    return token.text.lower()


def parse(sql: str, tokens: list[Token]) -> CopyStatement:
    """Parse one COPY statement from its tokens (``sql`` is the text they index)."""
    cursor = _Tokens(sql, tokens)
    cursor.next()  # COPY
    table: str | None = None
    schema: str | None = None
    query_sql: str | None = None
    columns: list[str] | None = None
    if cursor.at(TokenType.L_PAREN):
        open_paren = cursor.next()
        depth = 1
        while depth:
            token = cursor.next()
            if token.token_type is TokenType.L_PAREN:
                depth += 1
            elif token.token_type is TokenType.R_PAREN:
                depth -= 1
        query_sql = sql[open_paren.end + 1 : token.start]
    else:
        parts = [_name(cursor.next(), sql)]
        while cursor.at(TokenType.DOT):
            cursor.next()
            parts.append(_name(cursor.next(), sql))
        if len(parts) > 2:
            raise FeatureNotSupported(
                "cross-database references are not implemented: " + ".".join(parts)
            )
        table = parts[-1]
        schema = parts[0] if len(parts) == 2 else None
        if cursor.at(TokenType.L_PAREN):
            columns = _name_list(cursor)
    direction = cursor.next()
    if direction.text.lower() not in ("from", "to"):
        raise _syntax_error(sql, direction)
    is_from = direction.text.lower() == "from"
    if query_sql is not None and is_from:
        raise _syntax_error(sql, direction)
    _parse_endpoint(cursor, is_from)
    cursor.accept("with")
    options = _parse_options(cursor)
    if cursor.peek() is not None:
        raise _syntax_error(sql, cursor.next())
    return CopyStatement(
        is_from=is_from, table=table, schema=schema, columns=columns, query_sql=query_sql,
        options=_validated(options, is_from),
    )  # fmt: skip


def _parse_endpoint(cursor: _Tokens, is_from: bool) -> None:
    token = cursor.next()
    word = token.text.lower()
    if token.token_type in _STRING_TOKENS or word == "program":
        where = "from" if is_from else "to"
        raise InsufficientPrivilege(
            f"must be superuser or have privileges of the pg_{'read' if is_from else 'write'}"
            f"_server_files role to COPY {where} a file",
            hint=f"Anyone can COPY {'from stdin' if is_from else 'to stdout'}. "
            f"psql's \\copy command also works for anyone.",
        )
    expected = "stdin" if is_from else "stdout"
    if word != expected:
        raise _syntax_error(cursor.sql, token)


def _name_list(cursor: _Tokens) -> list[str]:
    cursor.expect(TokenType.L_PAREN)
    names = [_name(cursor.next(), cursor.sql)]
    while cursor.at(TokenType.COMMA):
        cursor.next()
        names.append(_name(cursor.next(), cursor.sql))
    cursor.expect(TokenType.R_PAREN)
    return names


def _string(cursor: _Tokens) -> str:
    token = cursor.next()
    if token.token_type not in _STRING_TOKENS:
        raise _syntax_error(cursor.sql, token)
    return token.text


def _parse_options(cursor: _Tokens) -> list[tuple[str, object, Token]]:
    """Options as (name, value, token) in the order given; either syntax."""
    if cursor.at(TokenType.L_PAREN):
        return _parenthesised_options(cursor)
    return _legacy_options(cursor)


def _parenthesised_options(cursor: _Tokens) -> list[tuple[str, object, Token]]:
    cursor.expect(TokenType.L_PAREN)
    options: list[tuple[str, object, Token]] = []
    while True:
        token = cursor.next()
        name = _name(token, cursor.sql)
        value: object = None
        nxt = cursor.peek()
        if nxt is not None and nxt.token_type not in (TokenType.COMMA, TokenType.R_PAREN):
            if nxt.token_type is TokenType.L_PAREN:
                value = tuple(_name_list(cursor))
            elif nxt.token_type is TokenType.STAR:
                cursor.next()
                value = "*"
            else:
                cursor.next()
                value = nxt.text if nxt.token_type in _STRING_TOKENS else nxt.text.lower()
        options.append((name, value, token))
        if cursor.at(TokenType.COMMA):
            cursor.next()
            continue
        cursor.expect(TokenType.R_PAREN)
        return options


def _legacy_columns(cursor: _Tokens) -> tuple[str, ...] | str:
    if cursor.at(TokenType.STAR):
        cursor.next()
        return "*"
    names = [_name(cursor.next(), cursor.sql)]
    while cursor.at(TokenType.COMMA):
        cursor.next()
        names.append(_name(cursor.next(), cursor.sql))
    return tuple(names)


def _legacy_options(cursor: _Tokens) -> list[tuple[str, object, Token]]:
    options: list[tuple[str, object, Token]] = []
    while (token := cursor.peek()) is not None:
        word = cursor.word()
        cursor.next()
        if word in ("binary", "csv"):
            options.append(("format", word, token))
        elif word == "header":
            options.append(("header", None, token))
        elif word in ("delimiter", "null", "quote", "escape", "encoding"):
            cursor.accept("as")
            options.append((word, _string(cursor), token))
        elif word == "force":
            if cursor.accept("quote"):
                options.append(("force_quote", _legacy_columns(cursor), token))
            elif cursor.accept("not"):
                if not cursor.accept("null"):
                    raise _syntax_error(cursor.sql, cursor.next())
                options.append(("force_not_null", _legacy_columns(cursor), token))
            else:
                raise _syntax_error(cursor.sql, cursor.next())
        else:
            raise _syntax_error(cursor.sql, token)
    return options


def _boolean(name: str, value: object) -> bool:
    if value is None:
        return True
    text = str(value).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise SqlSyntaxError(f"{name} requires a Boolean value")


def _single_byte(value: str, what: str) -> str:
    if len(value.encode()) != 1:
        raise FeatureNotSupported(f"COPY {what} must be a single one-byte character")
    return value


def _validated(raw: list[tuple[str, object, Token]], is_from: bool) -> CopyOptions:
    """Apply PostgreSQL's rules: one of each option, format-specific ones only where they fit."""
    options = CopyOptions()
    seen: set[str] = set()
    for name, value, token in raw:
        if name in seen:
            raise SqlSyntaxError("conflicting or redundant options", position=token.start + 1)
        seen.add(name)
        if name == "format":
            text = str(value).lower() if value is not None else ""
            if text not in FORMATS:
                raise InvalidParameterValue(
                    f'COPY format "{text}" not recognized', position=token.start + 1
                )
            options.format = text
        elif name == "header" and str(value).lower() == "match":
            options.header = options.header_match = True
        elif name == "header":
            options.header = _boolean(name, value)
        elif name == "freeze":
            options.freeze = _boolean(name, value)
            if options.freeze and not is_from:
                raise FeatureNotSupported("COPY FREEZE cannot be used with COPY TO")
        elif name in ("delimiter", "null", "quote", "escape", "encoding"):
            if not isinstance(value, str):
                raise SqlSyntaxError(f"{name} requires a string value", position=token.start + 1)
            setattr(options, name, value)
        elif name in ("force_quote", "force_not_null", "force_null"):
            if value == "*" and name == "force_quote":
                options.force_quote_all = True
            elif isinstance(value, tuple):
                setattr(options, name, value)
            else:
                raise SqlSyntaxError(
                    f'argument to option "{name}" must be a list of column names',
                    position=token.start + 1,
                )
        else:
            raise SqlSyntaxError(f'option "{name}" not recognized', position=token.start + 1)
    _check_combinations(options, is_from)
    return options


def _check_combinations(options: CopyOptions, is_from: bool) -> None:
    csv = options.is_csv
    mode = options.format.upper()
    if options.is_binary and options.delimiter is not None:
        raise SqlSyntaxError(f"cannot specify DELIMITER in {mode} mode")
    if options.is_binary and options.null is not None:
        raise SqlSyntaxError(f"cannot specify NULL in {mode} mode")
    if options.is_binary and options.header:
        raise FeatureNotSupported(f"cannot specify HEADER in {mode} mode")
    if options.header_match and not is_from:
        raise FeatureNotSupported('cannot use "match" with HEADER in COPY TO')
    if options.encoding is not None and options.encoding.upper().replace("-", "") != "UTF8":
        raise FeatureNotSupported(f'COPY encoding "{options.encoding}" is not supported')
    if options.delimiter is not None:
        _single_byte(options.delimiter, "delimiter")
        if options.delimiter in ("\r", "\n"):
            raise FeatureNotSupported("COPY delimiter cannot be newline or carriage return")
    if options.null is not None and ("\r" in options.null or "\n" in options.null):
        raise FeatureNotSupported("COPY null representation cannot use newline or carriage return")
    if not options.is_binary:
        if options.delimiter is None:
            options.delimiter = "," if csv else "\t"
        if options.null is None:
            options.null = "" if csv else "\\N"
    if (
        not csv
        and options.delimiter is not None
        and options.delimiter in ("\\.abcdefghijklmnopqrstuvwxyz0123456789")
    ):
        raise FeatureNotSupported(f'COPY delimiter cannot be "{options.delimiter}"')
    if options.quote is not None and not csv:
        raise FeatureNotSupported("COPY quote available only in CSV mode")
    if options.escape is not None and not csv:
        raise FeatureNotSupported("COPY escape available only in CSV mode")
    if csv:
        options.quote = _single_byte(options.quote if options.quote is not None else '"', "quote")
        options.escape = _single_byte(
            options.escape if options.escape is not None else options.quote, "escape"
        )
        if options.delimiter == options.quote:
            raise FeatureNotSupported("COPY delimiter and quote must be different")
    if (
        options.null is not None
        and options.delimiter is not None
        and (options.delimiter in options.null)
    ):
        raise FeatureNotSupported("COPY delimiter must not appear in the NULL specification")
    if (options.force_quote is not None or options.force_quote_all) and not csv:
        raise FeatureNotSupported("COPY force quote available only in CSV mode")
    if (options.force_quote is not None or options.force_quote_all) and is_from:
        raise FeatureNotSupported("COPY force quote only available using COPY TO")
    if options.force_not_null is not None and not csv:
        raise FeatureNotSupported("COPY force not null available only in CSV mode")
    if options.force_not_null is not None and not is_from:
        raise FeatureNotSupported("COPY force not null only available using COPY FROM")
    if options.force_null is not None and not csv:
        raise FeatureNotSupported("COPY force null available only in CSV mode")
    if options.force_null is not None and not is_from:
        raise FeatureNotSupported("COPY force null only available using COPY FROM")
