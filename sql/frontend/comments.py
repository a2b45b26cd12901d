"""The grammar of COMMENT ON: PostgreSQL's, with ``IS NULL`` (which drops the comment) read as ``IS ''``."""

from __future__ import annotations

import sqlglot
import sqlglot.errors
from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from storage.errors import SqlSyntaxError


def parse(sql: str, tokens: list[Token]) -> exp.Comment:
    """The statement is parsed on its own, so sqlglot's messages count lines and columns in it."""
    start = tokens[0].start
    end = tokens[-1].end + 1
    if (
        len(tokens) > 2
        and tokens[-2].token_type is TokenType.IS
        and tokens[-1].token_type is TokenType.NULL
    ):
        end = tokens[-1].start
        text = sql[start:end] + "''"
    else:
        text = sql[start:end]
    try:
        ast = sqlglot.parse_one(text, read="postgres")
    except sqlglot.errors.ParseError as exc:
        raise SqlSyntaxError(f"syntax error in COMMENT: {str(exc).splitlines()[0]}") from exc
    if not isinstance(ast, exp.Comment):
        raise SqlSyntaxError('syntax error at or near "COMMENT"')
    return ast
