"""Dates and timestamps in years Arrow cannot write as text (past 32767 AD).

PostgreSQL's dates run to 5874897 AD and its timestamps to 294276 AD, and
DuckDB computes them, but Arrow's cast to text writes
``<value out of range: N>`` for a year beyond ±32767.  Whether a column holds
such a value is checked on its numbers; the rare rows that do are spelt here
from their day numbers in the proleptic Gregorian calendar, as Arrow spells
the others (six fraction digits on a timestamp), so the styling and trimming
that follow treat them alike.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

FIRST_DAY = -12_687_428
"""-32767-01-01 in days since 1970-01-01: the first day Arrow writes."""
LAST_DAY = 11_248_737
"""32767-12-31: the last."""
_MICROS_PER_DAY = 86_400_000_000


def respelt(values: pa.Array, text: pa.Array) -> pa.Array:
    """``text`` (Arrow's spelling of the date32 or microsecond timestamp ``values``) with the
    values past Arrow's years spelt as PostgreSQL writes them."""
    per_day = 1 if pa.types.is_date32(values.type) else _MICROS_PER_DAY
    numbers = values.cast(pa.int32() if per_day == 1 else pa.int64())
    units = np.asarray(numbers.fill_null(0))
    if not len(units):
        return text
    first, last = FIRST_DAY * per_day, (LAST_DAY + 1) * per_day - 1
    if units.min() >= first and units.max() <= last:
        return text
    far = ((units < first) | (units > last)) & np.asarray(pc.is_valid(numbers))
    spelled = [_spelling(int(unit), per_day) for unit in units[far]]
    return pc.replace_with_mask(text, pa.array(far), pa.array(spelled, pa.string()))


def _spelling(unit: int, per_day: int) -> str:
    days, micros = divmod(unit, per_day)
    year, month, day = civil(days)
    sign = "-" if year < 0 else ""
    date = f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"
    if per_day == 1:
        return date
    seconds, fraction = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{date} {hour:02d}:{minute:02d}:{second:02d}.{fraction:06d}"


def civil(days: int) -> tuple[int, int, int]:
    """The (astronomical year, month, day) of a day number counted from 1970-01-01, by the
    400-year cycles of the Gregorian calendar (Howard Hinnant's ``civil_from_days``)."""
    z = days + 719_468
    era = z // 146_097
    day_of_era = z - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + 3 if shifted_month < 10 else shifted_month - 9
    return year_of_era + era * 400 + (month <= 2), month, day
