"""The grammar of CREATE, ALTER and DROP SEQUENCE, and of ADD GENERATED ... AS IDENTITY.

``CREATE SEQUENCE [IF NOT EXISTS] s [AS type] [INCREMENT [BY] n] [MINVALUE n | NO
MINVALUE] [MAXVALUE n | NO MAXVALUE] [START [WITH] n] [CACHE n] [[NO] CYCLE] [OWNED BY
t.c | NONE]``; ``ALTER SEQUENCE [IF EXISTS] s`` with the same options and ``RESTART
[[WITH] n]``, or ``RENAME TO s2``; ``DROP SEQUENCE [IF EXISTS] s [, ...] [CASCADE |
RESTRICT]``; and ``ALTER TABLE [ONLY] t ALTER [COLUMN] c ADD GENERATED {ALWAYS | BY
DEFAULT} AS IDENTITY [(SEQUENCE NAME s options)]``, which is how pg_dump writes an
identity column.  sqlglot reads the first as a CREATE it cannot check and the last as
an opaque command, so they are read here.
"""

from __future__ import annotations

from typing import Any

from sqlglot.tokens import Token, TokenType

from sql.common.names import fold
from sql.frontend.statements import IdentityStatement, SequenceStatement
from storage.errors import FeatureNotSupported, InvalidSchemaName, SqlSyntaxError

_SCHEMAS = ("", "public")


class _Reader:
    def __init__(self, sql: str, tokens: list[Token]) -> None:
        self.sql = sql
        self.tokens = tokens
        self.index = 0

    def peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def word(self, offset: int = 0) -> str:
        at = self.index + offset
        if at >= len(self.tokens) or self.tokens[at].token_type is TokenType.IDENTIFIER:
            return ""
        return self.tokens[at].text.lower()

    def error(self) -> SqlSyntaxError:
        token = self.peek()
        if token is None:
            return SqlSyntaxError("syntax error at end of input", position=len(self.sql) + 1)
        return SqlSyntaxError(f'syntax error at or near "{token.text}"', position=token.start + 1)

    def accept(self, *words: str) -> bool:
        if [self.word(i) for i in range(len(words))] == list(words):
            self.index += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error()

    def at_type(self, token_type: TokenType) -> bool:
        token = self.peek()
        if token is not None and token.token_type is token_type:
            self.index += 1
            return True
        return False

    def name(self) -> str:
        token = self.peek()
        if token is None:
            raise self.error()
        if token.token_type is TokenType.IDENTIFIER:
            self.index += 1
            return token.text
        if token.token_type in (TokenType.STRING, TokenType.NUMBER) or not (
            token.text[:1].isalpha() or token.text[:1] == "_"
        ):
            raise self.error()
        self.index += 1
        return fold(token.text)

    def dotted(self) -> list[str]:
        parts = [self.name()]
        while self.at_type(TokenType.DOT):
            parts.append(self.name())
        return parts

    def relation(self) -> str:
        """A relation name, optionally in schema public (3F000 for another schema)."""
        parts = self.dotted()
        if len(parts) > 2:
            raise self.error()
        if len(parts) == 2 and parts[0] not in _SCHEMAS:
            raise InvalidSchemaName(f'schema "{parts[0]}" does not exist')
        return parts[-1]

    def integer(self) -> int:
        negative = self.at_type(TokenType.DASH)
        if not negative:
            self.at_type(TokenType.PLUS)
        token = self.peek()
        if token is None or token.token_type is not TokenType.NUMBER:
            raise self.error()
        try:
            value = int(token.text)
        except ValueError:
            raise self.error() from None
        self.index += 1
        return -value if negative else value

    def done(self) -> None:
        if self.peek() is not None:
            raise self.error()


def is_sequence_statement(tokens: list[Token]) -> bool:
    if [t.text.lower() for t in tokens[-3:-1]] == ["owner", "to"]:
        return False  # ALTER SEQUENCE s OWNER TO r: the privileges grammar's
    words = [t.text.lower() for t in tokens[:3]]
    if len(words) >= 2 and words[0] in ("create", "alter", "drop") and words[1] == "sequence":
        return True
    return words[:3] in (["create", "temp", "sequence"], ["create", "temporary", "sequence"])


def parse(sql: str, tokens: list[Token]) -> SequenceStatement:
    reader = _Reader(sql, tokens)
    action = reader.word().upper()
    reader.index = 1
    if reader.accept("temp") or reader.accept("temporary"):
        raise FeatureNotSupported("temporary sequences are not supported")
    reader.expect("sequence")
    if action == "DROP":
        if_exists = reader.accept("if", "exists")
        names = [reader.relation()]
        while reader.at_type(TokenType.COMMA):
            names.append(reader.relation())
        cascade = reader.accept("cascade")
        if not cascade:
            reader.accept("restrict")
        reader.done()
        return SequenceStatement("DROP", tuple(names), if_exists=if_exists, cascade=cascade)
    if action == "CREATE":
        if_not_exists = reader.accept("if", "not", "exists")
        name = reader.relation()
        options = _options(reader, allow_restart=False)
        reader.done()
        return SequenceStatement("CREATE", (name,), options, if_not_exists=if_not_exists)
    if_exists = reader.accept("if", "exists")
    name = reader.relation()
    if reader.accept("rename", "to"):
        new_name = reader.name()
        reader.done()
        return SequenceStatement("ALTER", (name,), if_exists=if_exists, rename_to=new_name)
    options = _options(reader, allow_restart=True)
    reader.done()
    if not options:
        raise reader.error()
    return SequenceStatement("ALTER", (name,), options, if_exists=if_exists)


def _options(reader: _Reader, *, allow_restart: bool, identity: bool = False) -> dict[str, Any]:
    options: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if key in options:
            raise SqlSyntaxError("conflicting or redundant options")
        options[key] = value

    while True:
        if reader.accept("as"):
            put("as", " ".join(reader.dotted()))
        elif reader.accept("increment"):
            reader.accept("by")
            put("increment", reader.integer())
        elif reader.accept("minvalue"):
            put("minvalue", reader.integer())
        elif reader.accept("no", "minvalue"):
            put("minvalue", None)
        elif reader.accept("maxvalue"):
            put("maxvalue", reader.integer())
        elif reader.accept("no", "maxvalue"):
            put("maxvalue", None)
        elif reader.accept("start"):
            reader.accept("with")
            put("start", reader.integer())
        elif allow_restart and reader.accept("restart"):
            with_value = reader.accept("with")
            token = reader.peek()
            numeric = token is not None and token.token_type in (
                TokenType.NUMBER, TokenType.DASH, TokenType.PLUS,
            )  # fmt: skip
            put("restart", reader.integer() if with_value or numeric else None)
        elif reader.accept("cache"):
            put("cache", reader.integer())
        elif reader.accept("cycle"):
            put("cycle", True)
        elif reader.accept("no", "cycle"):
            put("cycle", False)
        elif reader.accept("owned", "by"):
            if reader.accept("none"):
                put("owned_by", None)
            else:
                parts = reader.dotted()
                if len(parts) < 2 or len(parts) > 3:
                    raise reader.error()
                if len(parts) == 3 and parts[0] not in _SCHEMAS:
                    raise InvalidSchemaName(f'schema "{parts[0]}" does not exist')
                put("owned_by", (parts[-2], parts[-1]))
        elif identity and reader.accept("sequence", "name"):
            put("sequence_name", reader.relation())
        else:
            return options


def parse_identity(sql: str, tokens: list[Token]) -> IdentityStatement | None:
    """``ALTER TABLE ... ALTER [COLUMN] c ADD GENERATED ...``, or None for another ALTER."""
    words = [t.text.lower() for t in tokens]
    if words[:2] != ["alter", "table"] or "generated" not in words:
        return None
    reader = _Reader(sql, tokens)
    reader.index = 2
    if_exists = reader.accept("if", "exists")
    reader.accept("only")
    try:
        table = reader.relation()
    except SqlSyntaxError:
        return None
    if not reader.accept("alter"):
        return None
    reader.accept("column")
    column = reader.name()
    if not reader.accept("add", "generated"):
        return None
    always = reader.accept("always")
    if not always:
        reader.expect("by", "default")
    reader.expect("as", "identity")
    options: dict[str, Any] = {}
    if reader.at_type(TokenType.L_PAREN):
        options = _options(reader, allow_restart=False, identity=True)
        if not reader.at_type(TokenType.R_PAREN):
            raise reader.error()
    reader.done()
    return IdentityStatement(table, column, always, options, if_exists)
