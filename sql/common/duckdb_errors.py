"""Translate DuckDB's exceptions into nyala's SQLSTATE errors, in PostgreSQL's words.

DuckDB is a foreign engine: its errors carry no SQLSTATE, so this is the one
place its exception classes and messages are mapped onto ours.
"""

from __future__ import annotations

import re

import duckdb

from storage import errors as e

_PREFIX = re.compile(r"^[A-Za-z ]+ Error: ")
# A DbError raised inside one of nyala's Python functions (sequence functions ...).
_UDF_ERROR = re.compile(r"executing the UDF: (\w+): (.*)", re.DOTALL)
# A DbError raised while DuckDB pulled a table's scan stream (a damaged file, say): the stream's
# Python traceback ends with the exception's qualified class name and message.
_STREAM_ERROR = re.compile(
    r"Python exception: Traceback.*^storage\.errors\.(\w+): ([^\n]*)", re.S | re.M
)
# A catalog function (a ``pgf_`` macro of sql/pg_catalog) called with arguments it has no form for.
_MACRO_ARGUMENTS = re.compile(r"Macro pgf_(\w+)\(\) does not support the supplied arguments")
_NO_TABLE = re.compile(r"Table with name (.+?) does not exist")


def _clean(message: str) -> str:
    first = message.split("\n", 1)[0]
    return _PREFIX.sub("", first).rstrip("!").strip()


def translate(exc: duckdb.Error) -> e.DbError:
    """Return the DbError a DuckDB exception stands for."""
    raw = str(exc)
    raised = _UDF_ERROR.search(raw) or _STREAM_ERROR.search(raw)
    if raised is not None:
        cls = getattr(e, raised.group(1), None)
        if isinstance(cls, type) and issubclass(cls, e.DbError):
            # Raised within a statement, so never FATAL even where the class's default is.
            return cls(raised.group(2).strip().split("\n", 1)[0], severity="ERROR")
    macro = _MACRO_ARGUMENTS.search(raw)
    if macro is not None:
        return e.UndefinedFunction(
            f"function {macro.group(1)} with these arguments does not exist",
            hint="No function matches the given name and argument types.",
        )
    if "QueryCanceled" in raw:
        return e.QueryCanceled("canceling statement due to user request")
    missing = _NO_TABLE.search(raw)
    if missing is not None:
        return e.UndefinedTable(f'relation "{missing.group(1)}" does not exist')
    message = _clean(raw)
    lowered = message.lower()
    if "like pattern must not end with escape character" in lowered:
        return e.InvalidEscapeSequence("LIKE pattern must not end with escape character")
    if "division by zero" in lowered:
        return e.DivisionByZero("division by zero")
    if isinstance(exc, duckdb.InterruptException):
        return e.QueryCanceled("canceling statement due to user request")
    if isinstance(exc, (duckdb.OutOfRangeException, duckdb.ConversionException)):
        overflow = _datetime_overflow(lowered)
        if overflow is not None:
            return e.DatetimeFieldOverflow(overflow)
        bad_time = _BAD_TIME.search(message)
        if bad_time is not None:
            return _time_input_error(bad_time.group(1))
        bad_format = _BAD_DATETIME.search(message)
        if bad_format is not None:
            return e.InvalidDatetimeFormat(
                f'invalid input syntax for type {bad_format.group(1)}: "{bad_format.group(2)}"'
            )
    if isinstance(exc, duckdb.OutOfRangeException) or "out of range" in lowered:
        return e.NumericValueOutOfRange(_out_of_range_message(message))
    if isinstance(exc, duckdb.ConversionException):
        special = _DECIMAL_SPECIAL.search(lowered)
        if special is not None and special.group(1) == "nan":
            # valid numeric input that nyala's decimal storage cannot hold (README, numeric)
            return e.FeatureNotSupported("numeric value 'NaN' is not supported")
        if special is not None:
            return e.NumericValueOutOfRange("numeric field overflow")
        if "could not cast value" in lowered and "decimal" in lowered:
            return e.NumericValueOutOfRange("numeric field overflow", detail=message)
        return e.InvalidTextRepresentation(_conversion_message(message))
    if isinstance(exc, duckdb.PermissionException):
        return e.InsufficientPrivilege(message)
    if isinstance(exc, duckdb.ParserException):
        return e.SqlSyntaxError(message)
    if isinstance(exc, duckdb.CatalogException):
        if "function" in lowered:
            return e.UndefinedFunction(message)
        if "table" in lowered:
            return e.UndefinedTable(message)
        return e.UndefinedObject(message)
    if isinstance(exc, duckdb.BinderException):
        unordered = _SET_OPERATION_ORDER.search(message)
        if unordered is not None:
            return e.UndefinedColumn(f'column "{unordered.group(1)}" does not exist')
        if "no function matches" in lowered or "function" in lowered:
            return e.UndefinedFunction(message)
        if "group by" in lowered or "aggregate" in lowered:
            return e.GroupingError(message)
        if "not found" in lowered or "does not have a column" in lowered:
            return e.UndefinedColumn(message)
        if "ambiguous" in lowered:
            return e.AmbiguousColumn(message)
        return e.DatatypeMismatch(message)
    if isinstance(exc, duckdb.NotImplementedException):
        return e.FeatureNotSupported(message)
    if isinstance(exc, duckdb.InvalidInputException):
        return e.InvalidParameterValue(message)
    if isinstance(exc, duckdb.OutOfMemoryException):
        return e.OutOfMemory(message)
    return e.InternalError(message)


_SET_OPERATION_ORDER = re.compile(r'Could not ORDER BY column "(?:[^".]*\.)?([^"]*)"')
"""DuckDB's message for a UNION's ORDER BY naming no output column: PostgreSQL's 42703."""
_DECIMAL_SPECIAL = re.compile(
    r'could not (?:convert string "|cast value )\s*[+-]?(nan|inf|infinity)\s*"? to decimal'
)
"""DuckDB's message for PostgreSQL's special numeric values (NaN, Infinity), as text or as
a double (a bound parameter), cast to DECIMAL."""
_BAD_DATETIME = re.compile(r'invalid (date|timestamp) field format: "([^"]*)"')
"""DuckDB's message for a date or timestamp text it cannot read: PostgreSQL's 22007."""
_FIELD_OUT_OF_RANGE = re.compile(r'(?:date|timestamp) field value out of range: "([^"]*)"')
"""DuckDB's message for a date or timestamp text naming a day or hour that does not exist."""


_BAD_TIME = re.compile(r'time field value out of range: "([^"]*)"', re.IGNORECASE)
"""DuckDB's one message for any time text it cannot read, well formed or not."""
_TIME_FIELDS = re.compile(
    r"\s*\d{1,2}:\d{1,2}(?::\d{1,2}(?:\.\d*)?)?\s*(?:[+-]\d{1,2}(?::?\d\d)?)?\s*"
)
"""A time spelt as PostgreSQL's fields (HH:MM[:SS[.frac]][zone]): DuckDB refused its values."""


def _time_input_error(text: str) -> e.DbError:
    """PostgreSQL's error for a time text DuckDB refused: 22008 when its fields are well formed
    but out of range (24:00:01, 25:00), else 22007 (41, abc)."""
    if _TIME_FIELDS.fullmatch(text):
        return e.DatetimeFieldOverflow(f'date/time field value out of range: "{text}"')
    return e.InvalidDatetimeFormat(f'invalid input syntax for type time: "{text}"')


def _datetime_overflow(lowered: str) -> str | None:
    """PostgreSQL's 22008 message for DuckDB's date or timestamp past its range (date or
    interval arithmetic, a literal), which is no numeric overflow (22003)."""
    field = _FIELD_OUT_OF_RANGE.search(lowered)
    if field is not None:
        return f'date/time field value out of range: "{field.group(1)}"'
    if "timestamp range" in lowered:
        return "timestamp out of range"
    if lowered.startswith("date out of range"):
        return "date out of range"
    return None


def _out_of_range_message(message: str) -> str:
    lowered = message.lower()
    if "decimal" in lowered:
        return "numeric field overflow"
    for duck, pg in (("int16", "smallint"), ("int32", "integer"), ("int64", "bigint")):
        if duck in lowered:
            return f"{pg} out of range"
    return "value out of range"


_CONVERT = re.compile(r"Could not convert string '(.*)' to (\w+)", re.S)
_PG_TYPE = {
    "INT8": "tinyint",
    "INT16": "smallint",
    "INT32": "integer",
    "INT64": "bigint",
    "DOUBLE": "double precision",
    "FLOAT": "real",
    "BOOL": "boolean",
    "DATE": "date",
    "TIMESTAMP": "timestamp",
}


def _conversion_message(message: str) -> str:
    match = _CONVERT.search(message)
    if match:
        value, duck_type = match.groups()
        pg = _PG_TYPE.get(duck_type.upper(), duck_type.lower())
        return f'invalid input syntax for type {pg}: "{value}"'
    return message


_ARROW_WRAPPED = {
    "Conversion Error": duckdb.ConversionException,
    "Out of Range Error": duckdb.OutOfRangeException,
    "Invalid Input Error": duckdb.InvalidInputException,
    "Constraint Error": duckdb.ConstraintException,
}


def translate_arrow(exc: OSError) -> e.DbError | None:
    """The DbError for a DuckDB error that reached us wrapped in Arrow's IOError while streaming."""
    message = str(exc)
    for prefix, cls in _ARROW_WRAPPED.items():
        if message.startswith(prefix):
            return translate(cls(message))
    return None
