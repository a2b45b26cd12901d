"""``DateStyle``: the output style (ISO, SQL, Postgres, German) and the field order
(MDY, DMY, YMD) that reads ambiguous dates such as ``01/02/2024``.

A value is checked and combined with the current one as PostgreSQL's
``check_datestyle`` does: a style alone keeps the current order (German alone
implies DMY), an order alone keeps the current style, and two styles or two
orders in one value conflict (22023).  The server formats results with the
style; the planner reads date constants with the order.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from storage.errors import InvalidParameterValue

DEFAULT = "ISO, MDY"

_STYLES = {"iso": "ISO", "sql": "SQL", "postgres": "Postgres", "german": "German"}
_ORDERS = {
    "ymd": "YMD",
    "dmy": "DMY",
    "euro": "DMY",
    "european": "DMY",
    "mdy": "MDY",
    "us": "MDY",
    "noneuro": "MDY",
    "noneuropean": "MDY",
}


@dataclass(frozen=True, slots=True)
class DateStyle:
    style: str = "ISO"
    order: str = "MDY"

    @property
    def text(self) -> str:
        return f"{self.style}, {self.order}"


@functools.lru_cache(maxsize=64)
def parse(value: str) -> DateStyle:
    """A stored (already checked) setting, ``"SQL, DMY"`` (cached: every Bind reads it)."""
    style, _, order = value.partition(",")
    return DateStyle(style.strip(), order.strip() or "MDY")


def combine(current: str, value: str) -> str:
    """The new setting when ``value`` is SET over ``current``; 22023 for a bad value."""
    now = parse(current)
    style: str | None = None
    order: str | None = None
    for word in value.replace(",", " ").split():
        key = word.strip().strip('"').lower()
        if key == "default":
            default = parse(DEFAULT)
            style, order = _once(style, default.style, value), _once(order, default.order, value)
        elif key in _STYLES:
            style = _once(style, _STYLES[key], value)
        elif key in _ORDERS:
            order = _once(order, _ORDERS[key], value)
        else:
            raise InvalidParameterValue(
                f'invalid value for parameter "DateStyle": "{value}"',
                detail=f'Unrecognized key word: "{word}".',
            )
    if order is None:
        order = "DMY" if style == "German" else now.order
    return DateStyle(style or now.style, order).text


def _once(previous: str | None, new: str, value: str) -> str:
    if previous is not None and previous != new:
        raise InvalidParameterValue(
            f'invalid value for parameter "DateStyle": "{value}"',
            detail='Conflicting "datestyle" specifications.',
        )
    return new
