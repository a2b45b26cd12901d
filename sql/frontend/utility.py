"""The grammar of utility statements: transaction control, SET, SHOW, RESET, DEALLOCATE, ...

sqlglot parses some of these into shapes that lose their meaning
(``START TRANSACTION`` becomes a column with an alias, ``ABORT`` a bare
column, ``SET TIME ZONE`` an opaque command), so the dialect's parser reads
them here, keyed by their first keyword, into ``Utility`` statements.
"""

from __future__ import annotations

from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import Token, TokenType

from sql.frontend.statements import Utility
from storage.errors import SqlSyntaxError

KEYWORDS = (
    "begin", "start", "commit", "end", "rollback", "abort", "savepoint", "release", "show",
    "reset", "deallocate", "discard", "checkpoint", "set", "prepare", "listen", "unlisten",
    "notify",
)  # fmt: skip


def _words(tokens: list[Token]) -> list[str]:
    """Lower-cased words; sqlglot folds some keyword runs (TRANSACTION ISOLATION LEVEL) into one token."""
    return [word for t in tokens for word in t.text.lower().split()]


def _value_text(tokens: list[Token]) -> str:
    parts = []
    for token in tokens:
        if token.token_type is TokenType.COMMA:
            parts.append(",")
        elif token.token_type is TokenType.STRING or token.token_type is TokenType.IDENTIFIER:
            parts.append(token.text)
        else:
            parts.append(token.text)
    text = ""
    for part in parts:
        text += part if part == "," or not text else (" " + part if text[-1] != "," else " " + part)
    text = text.replace(" ,", ",")
    if text[:2] in ("- ", "+ ") and text[2:3].isdecimal():  # SET extra_float_digits = -3
        return text[0] + text[2:]
    return text


def _modes(words: list[str]) -> tuple[str, ...]:
    text = " ".join(w for w in words if w != ",")
    modes = []
    for mode in (
        "isolation level read committed",
        "isolation level repeatable read",
        "isolation level serializable",
        "isolation level read uncommitted",
        "read only",
        "read write",
        "deferrable",
        "not deferrable",
    ):
        if mode in text:
            modes.append(mode)
            text = text.replace(mode, "")
    if text.strip():
        raise SqlSyntaxError(f'syntax error at or near "{text.split()[0]}"')
    return tuple(modes)


def parse(tokens: list[Token]) -> Utility | None:
    """The utility statement ``tokens`` spell, or None for anything else."""
    if tokens[0].token_type is TokenType.COMMAND and tokens[0].text.lower() == "prepare":
        # The postgres tokenizer reads PREPARE's rest as one opaque string: read it again.
        rest = Postgres().tokenize(tokens[1].text) if len(tokens) == 2 else tokens[1:]
        tokens = [tokens[0], *rest]
    words = _words(tokens)
    head = words[0]
    if head in ("begin", "start"):
        mode_words = words[1:]
        if head == "start":
            if not mode_words or mode_words[0] != "transaction":
                return None
            mode_words = mode_words[1:]
        elif mode_words and mode_words[0] in ("work", "transaction"):
            mode_words = mode_words[1:]
        return Utility(kind="BEGIN", modes=_modes(mode_words))
    if (
        words[1:2] == ["transaction"]
        and head == "prepare"
        or (words[1:2] == ["prepared"] and head in ("commit", "rollback"))
    ):
        return _two_phase(head, tokens)
    if head in ("commit", "end") and all(w in ("work", "transaction") for w in words[1:]):
        return Utility(kind="COMMIT")
    if head in ("rollback", "abort") and all(w in ("work", "transaction") for w in words[1:]):
        return Utility(kind="ROLLBACK")
    if head == "rollback":
        rest = tokens[1:]
        while rest and rest[0].text.lower() in ("work", "transaction"):
            rest = rest[1:]
        if rest and rest[0].text.lower() == "to":
            return Utility(kind="ROLLBACK TO", name=_savepoint_name(rest[1:]))
    if head == "savepoint":
        return Utility(kind="SAVEPOINT", name=_savepoint_name(tokens[1:], optional_keyword=False))
    if head == "release":
        return Utility(kind="RELEASE", name=_savepoint_name(tokens[1:]))
    if head == "show" and len(words) >= 2:
        name = " ".join(words[1:]).replace(" . ", ".")
        name = _ROLE_SETTINGS.get(name, name)
        if name == "transaction isolation level":
            name = "transaction_isolation"
        elif name in ("time zone",):
            name = "timezone"
        return Utility(kind="SHOW", name=name)
    if head == "reset" and len(words) >= 2:
        name = " ".join(words[1:]).replace(" . ", ".")
        return Utility(kind="RESET", name=_ROLE_SETTINGS.get(name, name))
    if head == "deallocate":
        rest = tokens[1:]
        if rest and rest[0].text.lower() == "prepare":
            rest = rest[1:]
        if len(rest) != 1:
            raise SqlSyntaxError('syntax error at or near "deallocate"')
        if rest[0].token_type is not TokenType.IDENTIFIER and rest[0].text.lower() == "all":
            return Utility(kind="DEALLOCATE")
        return Utility(kind="DEALLOCATE", name=rest[0].text)
    if head == "discard" and len(words) == 2 and words[1] in _DISCARDS:
        return Utility(kind="DISCARD", name=_DISCARDS[words[1]])
    if head in ("listen", "unlisten", "notify"):
        return _notification_statement(head, tokens)
    if head == "checkpoint" and len(words) == 1:
        return Utility(kind="CHECKPOINT")
    if head == "set":
        rest = tokens[1:]
        local = False
        if (
            rest
            and rest[0].text.lower() in ("session", "local")
            and len(rest) > 1
            and rest[1].text.lower() not in ("characteristics",)
        ):
            local = rest[0].text.lower() == "local"
            rest = rest[1:]
        setting = _set_statement(rest)
        if setting is not None and local and setting.name not in ("transaction",):
            setting.set("local", True)
        return setting
    return None


_ROLE_SETTINGS = {"session authorization": "session_authorization", "role": "role"}


def _role_name(token: Token) -> str:
    """A role name as SET ROLE reads it: quoted or a string as written, else folded."""
    if token.token_type in (TokenType.IDENTIFIER, TokenType.STRING):
        return token.text
    return token.text.lower()


def _set_statement(rest: list[Token]) -> Utility | None:
    """SET's name and value (after SESSION or LOCAL), or the transaction modes it sets."""
    rest_words = _words(rest)
    if rest_words[:2] == ["session", "authorization"]:  # after SET LOCAL
        rest, rest_words = rest[1:], rest_words[1:]
    if len(rest) == 2 and rest_words[0] in ("role", "authorization"):
        name = "role" if rest_words[0] == "role" else "session_authorization"
        return Utility(kind="SET", name=name, value=_role_name(rest[1]))
    if rest_words[:4] == ["session", "characteristics", "as", "transaction"]:
        return Utility(kind="SET", name="characteristics", modes=_modes(rest_words[4:]))
    if rest_words[:2] == ["time", "zone"]:
        return Utility(kind="SET", name="TimeZone", value=_value_text(rest[2:]))
    if len(rest) >= 5 and rest[1].token_type is TokenType.DOT and rest_words[3] in ("to", "="):
        # A custom (extension) setting: ``SET nyala.read_timestamp = ...``.
        name = f"{rest[0].text}.{rest[2].text}"
        return Utility(kind="SET", name=name, value=_value_text(rest[4:]))
    if len(rest) >= 3 and rest_words[1] in ("to", "="):
        return Utility(kind="SET", name=rest[0].text, value=_value_text(rest[2:]))
    if rest_words and rest_words[0] == "transaction":
        return Utility(kind="SET", name="transaction", modes=_modes(rest_words[1:]))
    return None


def _channel(token: Token) -> str:
    if token.token_type is TokenType.IDENTIFIER:
        return token.text
    if token.token_type is TokenType.STRING:
        raise SqlSyntaxError(f"syntax error at or near \"'{token.text}'\"")
    return token.text.lower()


def _notification_statement(head: str, tokens: list[Token]) -> Utility:
    """LISTEN channel, UNLISTEN channel | *, NOTIFY channel [, 'payload']."""
    rest = tokens[1:]
    if head == "unlisten" and len(rest) == 1 and rest[0].token_type is TokenType.STAR:
        return Utility(kind="UNLISTEN", name="*")
    if head == "notify" and len(rest) == 3 and rest[1].token_type is TokenType.COMMA:
        if rest[2].token_type is not TokenType.STRING:
            raise SqlSyntaxError(f'syntax error at or near "{rest[2].text}"')
        return Utility(kind="NOTIFY", name=_channel(rest[0]), value=rest[2].text)
    if len(rest) != 1:
        near = rest[1].text if len(rest) > 1 else "end of input"
        where = f'at or near "{near}"' if len(rest) > 1 else "at end of input"
        raise SqlSyntaxError(f"syntax error {where}")
    return Utility(kind=head.upper(), name=_channel(rest[0]))


_DISCARDS = {
    "all": "ALL",
    "plans": "PLANS",
    "sequences": "SEQUENCES",
    "temp": "TEMP",
    "temporary": "TEMP",
}


def _two_phase(head: str, tokens: list[Token]) -> Utility:
    """PREPARE TRANSACTION, COMMIT PREPARED or ROLLBACK PREPARED, with its gid (a string)."""
    kind = "PREPARE TRANSACTION" if head == "prepare" else f"{head.upper()} PREPARED"
    if len(tokens) != 3 or tokens[2].token_type is not TokenType.STRING:
        bad = tokens[2] if len(tokens) > 2 else None
        where = f'at or near "{bad.text}"' if bad is not None else "at end of input"
        raise SqlSyntaxError(f"syntax error {where}")
    return Utility(kind=kind, name=tokens[2].text)


def _savepoint_name(tokens: list[Token], *, optional_keyword: bool = True) -> str:
    """The savepoint a SAVEPOINT, ROLLBACK TO or RELEASE names: folded to lower case unless
    quoted, as PostgreSQL folds identifiers."""
    if optional_keyword and len(tokens) > 1 and tokens[0].text.lower() == "savepoint":
        tokens = tokens[1:]
    if len(tokens) != 1:
        near = tokens[1].text if len(tokens) > 1 else "end of input"
        raise SqlSyntaxError(f'syntax error at or near "{near}"')
    token = tokens[0]
    if token.token_type is TokenType.IDENTIFIER:
        return token.text
    return token.text.lower()
