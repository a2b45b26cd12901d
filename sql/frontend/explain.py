"""The grammar of EXPLAIN's options: ``EXPLAIN [ANALYZE] [VERBOSE]`` or ``EXPLAIN (option [value], ...)``."""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from storage.errors import SqlSyntaxError

_OPTION_WORDS = {"analyze", "verbose", "costs", "buffers", "timing", "summary", "settings", "wal"}
_TRUE_WORDS = {"true", "on", "1"}
_FALSE_WORDS = {"false", "off", "0"}


def split_options(rest: list[Token]) -> tuple[bool, list[Token]]:
    """Whether to ANALYZE, and the tokens of the explained statement (``rest`` follows EXPLAIN)."""
    analyze = False
    if rest and rest[0].token_type is TokenType.L_PAREN:
        close = next((i for i, t in enumerate(rest) if t.token_type is TokenType.R_PAREN), None)
        if close is None:
            raise SqlSyntaxError('syntax error at or near "("', position=rest[0].start + 1)
        options = [t for t in rest[1:close] if t.token_type is not TokenType.COMMA]
        index = 0
        while index < len(options):
            word = options[index].text.lower()
            if word not in _OPTION_WORDS:
                raise SqlSyntaxError(
                    f'unrecognized EXPLAIN option "{word}"', position=options[index].start + 1
                )
            value = True
            if index + 1 < len(options) and options[index + 1].text.lower() in (
                _TRUE_WORDS | _FALSE_WORDS
            ):
                value = options[index + 1].text.lower() in _TRUE_WORDS
                index += 1
            if word == "analyze":
                analyze = value
            index += 1
        rest = rest[close + 1 :]
    else:
        while rest and rest[0].text.lower() in ("analyze", "analyse", "verbose"):
            analyze = analyze or rest[0].text.lower() != "verbose"
            rest = rest[1:]
    if not rest:
        raise SqlSyntaxError("syntax error at end of input")
    return analyze, rest
