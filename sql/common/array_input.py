"""PostgreSQL's array input syntax (array_in): ``{1,2,NULL}``, ``{"a b","c\\"d"}``,
``{{1,2},{3,4}}``, optionally after explicit bounds that start at 1 (``[1:2]={7,8}``;
nyala's arrays always do, so other lower bounds are 0A000).

A client sends an array parameter this way (psycopg's lists, pgjdbc's ``setArray``
in text) and a query casts text to an array with it (``'{1,2}'::int[]``).  Elements come
back as their texts, None for an unquoted NULL, nested lists for each dimension;
the caller converts them with the element type's input rule.  Malformed input is
22P02 with PostgreSQL's message, never an IndexError.
"""

from __future__ import annotations

import re

from storage.errors import FeatureNotSupported, InvalidTextRepresentation, ProgramLimitExceeded

Elements = list["Elements | str | None"]

_BOUNDS = re.compile(r"\s*(\[\s*[+-]?\d+\s*(:\s*[+-]?\d+\s*)?\]\s*)+=")
_BOUND = re.compile(r"\[\s*([+-]?\d+)\s*(?::\s*([+-]?\d+)\s*)?\]")
_MAX_DIMENSIONS = 6


def parse_array(text: str) -> Elements:
    """``text`` as nested lists of element texts; 22P02 when it is not an array literal or
    its sub-arrays differ in length."""
    start = 0
    lengths: list[int] | None = None
    bounds = _BOUNDS.match(text)
    if bounds is not None:
        start = bounds.end()
        lengths = []
        for low, high in _BOUND.findall(bounds.group(0)):
            first, last = (int(low), int(high)) if high else (1, int(low))
            if first != 1:
                raise FeatureNotSupported(
                    "arrays with a lower bound other than 1 are not supported"
                )
            lengths.append(last - first + 1)
    parser = _Parser(text, start)
    parser.skip_space()
    if parser.peek() != "{":
        raise _malformed(text, 'Array value must start with "{" or dimension information.')
    value = parser.array(1)
    parser.skip_space()
    if parser.position != len(text):
        raise _malformed(text, "Junk after closing right brace.")
    _check_shape(text, value)
    if lengths is not None and lengths != (shape(value) if value else []):
        raise _malformed(text, "Specified array dimensions do not match array contents.")
    return value


def flatten(value: Elements) -> list[str | None]:
    """The element texts of a (nested) parsed array, in row-major order."""
    out: list[str | None] = []
    for item in value:
        if isinstance(item, list):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out


def shape(value: Elements) -> list[int]:
    """Each dimension's length (a rectangular array, as ``parse_array`` checked)."""
    dims = [len(value)]
    while value and isinstance(value[0], list):
        value = value[0]
        dims.append(len(value))
    return dims


class _Parser:
    def __init__(self, text: str, position: int) -> None:
        self.text = text
        self.position = position

    def peek(self) -> str:
        return self.text[self.position] if self.position < len(self.text) else ""

    def skip_space(self) -> None:
        while self.peek().isspace():
            self.position += 1

    def array(self, depth: int) -> Elements:
        if depth > _MAX_DIMENSIONS:
            raise ProgramLimitExceeded(
                f"number of array dimensions ({depth}) exceeds the maximum allowed "
                f"({_MAX_DIMENSIONS})"
            )
        self.position += 1  # the opening brace
        out: Elements = []
        self.skip_space()
        if self.peek() == "}":
            if depth > 1:
                raise _malformed(self.text, 'Unexpected "}" character.')
            self.position += 1
            return out
        while True:
            self.skip_space()
            char = self.peek()
            if char == "{":
                out.append(self.array(depth + 1))
            elif char == "":
                raise _malformed(self.text, "Unexpected end of input.")
            elif char in ",}":
                raise _malformed(self.text, f'Unexpected "{char}" character.')
            else:
                out.append(self.element())
            self.skip_space()
            char = self.peek()
            self.position += 1
            if char == "}":
                return out
            if char != ",":
                raise _malformed(
                    self.text,
                    "Unexpected end of input." if char == "" else f'Unexpected "{char}" character.',
                )

    def element(self) -> str | None:
        """One element: quoted or not, backslash escapes either way; an unquoted NULL is None."""
        chars: list[str] = []
        quoted = False
        in_quotes = False
        trailing_space = 0
        while True:
            char = self.peek()
            if char == "":
                raise _malformed(self.text, "Unexpected end of input.")
            if char == "\\":
                self.position += 1
                escaped = self.peek()
                if escaped == "":
                    raise _malformed(self.text, "Unexpected end of input.")
                chars.append(escaped)
                trailing_space = 0
            elif char == '"':
                if not in_quotes and chars and not quoted:
                    raise _malformed(self.text, "Unexpected array element.")
                in_quotes = not in_quotes
                quoted = True
            elif not in_quotes and char in ",}":
                break
            elif not in_quotes and char in "{":
                raise _malformed(self.text, 'Unexpected "{" character.')
            elif not in_quotes and char.isspace():
                if chars:
                    chars.append(char)
                    trailing_space += 1
            else:
                chars.append(char)
                trailing_space = 0
            self.position += 1
        if trailing_space:
            del chars[-trailing_space:]
        word = "".join(chars)
        if not quoted and word.upper() == "NULL":
            return None
        return word


def _check_shape(text: str, value: Elements) -> None:
    """PostgreSQL's rule: sub-arrays of one level have one length and nest alike."""

    def depth_of(item: Elements | str | None) -> int:
        return 1 + depth_of(item[0]) if isinstance(item, list) and item else 0

    def check(items: Elements) -> None:
        nested = [isinstance(item, list) for item in items]
        if any(nested) and not all(nested):
            raise _malformed(text, "Unexpected array element.")
        if all(nested) and items:
            lists = [item for item in items if isinstance(item, list)]
            if len({len(item) for item in lists}) > 1 or len({depth_of(i) for i in lists}) > 1:
                raise _malformed(
                    text, "Multidimensional arrays must have sub-arrays with matching dimensions."
                )
            for item in lists:
                check(item)

    check(value)


def _malformed(text: str, detail: str) -> InvalidTextRepresentation:
    return InvalidTextRepresentation(f'malformed array literal: "{text}"', detail=detail)
