"""``to_char(date/time, pattern)`` as PostgreSQL formats it, built from DuckDB's ``strftime``.

sqlglot would turn the pattern into a strftime format and lose what strftime cannot
say: ``Day`` and ``Month`` padded to nine characters (unless ``FM``), ``Q``, ``WW``,
``D``, ``MS``, case variants (``MON``, ``mon``), and ``"quoted"`` text.  The pattern is
read here, field by field with PostgreSQL's longest-match rule, into strftime pieces
and expressions joined with ``||`` (so a NULL value gives NULL).  A numeric first
argument is left to fail (42883) rather than be formatted wrongly.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

DT = exp.DataType.Type
_DATETIME = (DT.DATE, DT.TIMESTAMP, DT.TIMESTAMPTZ)

Piece = str | Callable[[exp.Expr], exp.Expr]


def _call(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _text(node: exp.Expr) -> exp.Expr:
    return exp.Cast(this=node, to=exp.DataType.build("VARCHAR"))


def _named(fmt: str, case: str, pad: bool) -> Piece:
    """A month or day name: strftime's, in the pattern's case, padded to 9 unless FM."""

    def build(value: exp.Expr) -> exp.Expr:
        name = _call("strftime", value, exp.Literal.string(fmt))
        if case == "upper":
            name = exp.Upper(this=name)
        elif case == "lower":
            name = exp.Lower(this=name)
        if pad:
            name = _call("rpad", name, exp.Literal.number(9), exp.Literal.string(" "))
        return name

    return build


def _number(part: str, width: int, fill: bool) -> Piece:
    """A computed field (quarter, week, ...) zero-filled to ``width`` unless FM."""

    def build(value: exp.Expr) -> exp.Expr:
        if part == "week":
            doy = _call("dayofyear", value)
            number: exp.Expr = exp.Add(
                this=exp.IntDiv(
                    this=exp.Paren(this=exp.Sub(this=doy, expression=exp.Literal.number(1))),
                    expression=exp.Literal.number(7),
                ),
                expression=exp.Literal.number(1),
            )
        elif part == "dow":
            number = exp.Add(this=_call("dayofweek", value), expression=exp.Literal.number(1))
        elif part == "ms":
            number = exp.IntDiv(
                this=_call("microsecond", value), expression=exp.Literal.number(1000)
            )
            number = exp.Mod(this=number, expression=exp.Literal.number(1000))
        else:
            number = _call(part, value)
        text = _text(number)
        if fill and width > 1:
            text = _call("lpad", text, exp.Literal.number(width), exp.Literal.string("0"))
        return text

    return build


def _field(word: str, fm: bool) -> Piece | None:
    """The piece for one pattern keyword, or None if ``word`` is not one."""
    strf = {
        "HH24": "%H", "HH12": "%I", "HH": "%I", "MI": "%M", "SS": "%S", "US": "%f",
        "YYYY": "%Y", "YY": "%y", "MM": "%m", "DD": "%d", "DDD": "%j", "IW": "%V",
        "AM": "%p", "PM": "%p",
    }  # fmt: skip
    unpadded = {"HH24": "%-H", "HH12": "%-I", "HH": "%-I", "MM": "%-m", "DD": "%-d"}
    if word in strf:
        return unpadded.get(word, strf[word]) if fm else strf[word]
    if word in ("am", "pm"):
        return lambda v: exp.Lower(this=_call("strftime", v, exp.Literal.string("%p")))
    names = {"MONTH": ("%B", True), "MON": ("%b", False), "DAY": ("%A", True), "DY": ("%a", False)}
    if word.upper() in names:
        fmt, long = names[word.upper()]
        case = "upper" if word.isupper() else "lower" if word.islower() else "title"
        return _named(fmt, case, pad=long and not fm)
    computed = {"Q": ("quarter", 1), "WW": ("week", 2), "D": ("dow", 1), "MS": ("ms", 3),
                "ID": ("isodow", 1)}  # fmt: skip
    if word in computed:
        part, width = computed[word]
        return _number(part, width, fill=not fm)
    return None


_KEYWORDS = sorted(
    ["HH24", "HH12", "HH", "MI", "SS", "MS", "US", "YYYY", "YY", "MM", "DDD", "DD", "D", "ID",
     "IW", "WW", "Q", "AM", "PM", "am", "pm", "MONTH", "Month", "month", "MON", "Mon", "mon",
     "DAY", "Day", "day", "DY", "Dy", "dy"],
    key=len,
    reverse=True,
)  # fmt: skip


def _pieces(pattern: str) -> list[Piece] | None:
    pieces: list[Piece] = []
    index, fm = 0, False
    while index < len(pattern):
        if pattern.startswith("FM", index):
            fm, index = True, index + 2
            continue
        if pattern[index] == '"':
            end = pattern.find('"', index + 1)
            end = len(pattern) if end < 0 else end
            pieces.append(pattern[index + 1 : end].replace("%", "%%"))
            index = end + 1
            continue
        word = next((k for k in _KEYWORDS if pattern.startswith(k, index)), None)
        if word is None:
            pieces.append(pattern[index].replace("%", "%%"))
            index += 1
            continue
        piece = _field(word, fm)
        if piece is None:
            return None
        pieces.append(piece)
        index, fm = index + len(word), False
    return pieces


def rewrite_to_char(node: exp.Expr) -> exp.Expr:
    """``to_char(value, 'pattern')`` of a date/time value as DuckDB expressions, else ``node``."""
    if not (isinstance(node, exp.Anonymous) and node.name.lower() == "to_char"):
        return node
    args = node.expressions
    if len(args) != 2 or not (isinstance(args[1], exp.Literal) and args[1].is_string):
        return node
    value = args[0]
    if value.type is None or value.type.this not in _DATETIME:
        return node
    pieces = _pieces(args[1].name)
    if pieces is None:
        return node
    parts: list[exp.Expr] = []
    fmt = ""
    for piece in pieces:
        if isinstance(piece, str):
            fmt += piece
            continue
        if fmt:
            parts.append(_call("strftime", value.copy(), exp.Literal.string(fmt)))
            fmt = ""
        parts.append(piece(value.copy()))
    if fmt or not parts:
        parts.append(_call("strftime", value.copy(), exp.Literal.string(fmt)))
    result = parts[0]
    for part in parts[1:]:
        result = exp.DPipe(this=result, expression=part)
    return exp.Paren(this=result)
