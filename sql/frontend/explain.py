"""The grammar of EXPLAIN's options: ``EXPLAIN [ANALYZE] [VERBOSE]`` or ``EXPLAIN (option [value], ...)``.

``FORMAT TEXT`` (the default) or ``FORMAT JSON``: the JSON form is the one
meant for programs, such as a parallel reader asking which tablets a scan reads.
"""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

from storage.errors import FeatureNotSupported, InvalidParameterValue, SqlSyntaxError

_OPTION_WORDS = {
    "analyze", "verbose", "costs", "buffers", "timing", "summary", "settings", "wal", "format",
}  # fmt: skip
_FORMATS = {"text", "json"}
_TRUE_WORDS = {"true", "on", "1"}
_FALSE_WORDS = {"false", "off", "0"}


def split_options(rest: list[Token]) -> tuple[bool, str, list[Token]]:
    """Whether to ANALYZE, the output format, and the tokens of the explained statement
    (``rest`` follows EXPLAIN)."""
    analyze = False
    fmt = "text"
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
            if word == "format":
                fmt = _format(options, index)
                index += 2
                continue
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
    return analyze, fmt, rest


def _format(options: list[Token], index: int) -> str:
    """The value of ``FORMAT`` at ``options[index]``: text or json (22023 for any other)."""
    if index + 1 >= len(options):
        raise SqlSyntaxError('syntax error at or near ")"')
    value = options[index + 1].text.lower()
    if value in ("yaml", "xml"):
        raise FeatureNotSupported(f"EXPLAIN (FORMAT {value.upper()}) is not supported")
    if value not in _FORMATS:
        raise InvalidParameterValue(f'unrecognized value for EXPLAIN option "format": "{value}"')
    return value
