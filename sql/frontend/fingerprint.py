"""Fingerprint: a statement's pg_stat_statements identity, its query id and normalised text.

PostgreSQL's pg_stat_statements groups the runs of a query by a hash of its
parse tree with the constants left out, and shows the text of the first run
with each constant replaced by ``$n`` (numbered after the statement's own
parameters): ``select * from t where a = -1`` is shown as ``select * from t
where a = $1``, and ``SELECT  2`` counts as the same statement.  The tokens
give the same grouping without a tree: the id hashes the token stream with
constants blanked (keywords and unquoted names folded to lower case), and the
text is the original with each constant's characters replaced.  Utility
statements (everything but queries and writes) are, as in PostgreSQL 15, kept
verbatim and identified by their text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlglot.tokens import Token, TokenType

_CONSTANTS = frozenset(
    {
        TokenType.NUMBER,
        TokenType.STRING,
        TokenType.NATIONAL_STRING,
        TokenType.BIT_STRING,
        TokenType.HEX_STRING,
        TokenType.BYTE_STRING,
        TokenType.RAW_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.UNICODE_STRING,
        TokenType.TRUE,
        TokenType.FALSE,
        TokenType.NULL,
    }
)
_OPERAND_ENDS = _CONSTANTS | {
    TokenType.VAR,
    TokenType.IDENTIFIER,
    TokenType.R_PAREN,
    TokenType.R_BRACKET,
}
"""Tokens after which ``-`` subtracts; elsewhere it negates, and belongs to the constant."""


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What pg_stat_statements keys (``queryid``, a signed 64-bit hash) and shows (``text``);
    ``utility`` for a statement kept verbatim."""

    queryid: int
    text: str
    utility: bool = False


def _hash(parts: str) -> int:
    digest = hashlib.blake2b(parts.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def verbatim(text: str) -> Fingerprint:
    """A utility statement: its text as sent, identified by that text."""
    return Fingerprint(_hash(text), text, utility=True)


def _constants(tokens: list[Token]) -> list[tuple[int, int]]:
    """(first, last) token index of each constant, a negated number's minus sign included."""
    found: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        kind = token.token_type
        if kind not in _CONSTANTS:
            continue
        if index and tokens[index - 1].token_type is TokenType.PARAMETER:
            continue  # the 1 of $1
        first = index
        if (
            kind is TokenType.NUMBER
            and index
            and tokens[index - 1].token_type is TokenType.DASH
            and (index < 2 or tokens[index - 2].token_type not in _OPERAND_ENDS)
        ):
            first = index - 1
        found.append((first, index))
    return found


def _highest_parameter(tokens: list[Token]) -> int:
    highest = 0
    for before, token in zip(tokens, tokens[1:], strict=False):
        if before.token_type is TokenType.PARAMETER and token.text.isdigit():
            highest = max(highest, int(token.text))
    return highest


def normalised(sql: str, tokens: list[Token]) -> Fingerprint:
    """A query or write: constants become ``$n`` in the text and drop out of the id."""
    constants = _constants(tokens)
    number = _highest_parameter(tokens)
    pieces: list[str] = []
    shape: list[str] = []
    position = tokens[0].start
    index = 0
    for first, last in constants:
        shape.extend(_shape(t) for t in tokens[index:first])
        shape.append("?")
        index = last + 1
        number += 1
        pieces.append(sql[position : tokens[first].start])
        pieces.append(f"${number}")
        position = tokens[last].end + 1
    shape.extend(_shape(t) for t in tokens[index:])
    pieces.append(sql[position : tokens[-1].end + 1])
    return Fingerprint(_hash("\x00".join(shape)), "".join(pieces))


def _shape(token: Token) -> str:
    if token.token_type is TokenType.IDENTIFIER:
        return '"' + token.text
    return token.text.lower()
