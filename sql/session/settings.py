"""Session settings: the registry of names SET, SHOW and RESET know, and each session's values.

Each setting has a default, an optional validator that normalises or refuses
a value, and a flag saying whether the server reports it to the client with
ParameterStatus (drivers such as pgjdbc re-check those on every change).

Every other PostgreSQL 15 parameter (``pg_parameters``) is known too, so
scripts that set ``work_mem`` or ``escape_string_warning`` first still run:
its value is checked and shown as PostgreSQL would, but nyala does not act on
it, which SET says with a NOTICE and ``pg_settings.short_desc`` says too.
Parameters PostgreSQL fixes at server start or in its configuration file
cannot be SET (55P02), as there.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from sql.common import date_styles
from sql.common.time_zones import session_zone
from sql.common.version import SERVER_VERSION, SERVER_VERSION_NUM
from sql.planner.time_travel import canonical_instant
from sql.session.pg_parameters import PARAMETERS, Parameter
from storage.errors import (
    CantChangeRuntimeParam,
    DbError,
    InsufficientPrivilege,
    InvalidParameterValue,
    UndefinedObject,
)

Validator = Callable[[str], str]
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    default: str
    reported: bool = False
    read_only: bool = False
    validate: Validator | None = None
    honoured: bool = True
    context: str = "user"
    vartype: str = "string"
    unit: str = ""
    combine: Callable[[str, str], str] | None = None
    """Checks a new value against the current one (DateStyle keeps the part not named)."""


_MESSAGE_LEVELS = next(p.choices for p in PARAMETERS if p.name == "client_min_messages")
"""client_min_messages' values as PostgreSQL lists them, least to most severe."""


def _one_of(*allowed: str, canonical: str | None = None) -> Validator:
    def check(value: str) -> str:
        if value.lower() not in {a.lower() for a in allowed}:
            raise InvalidParameterValue(f'invalid value for parameter: "{value}"')
        return canonical or next(a for a in allowed if a.lower() == value.lower())

    return check


def _date_style(value: str) -> str:
    return date_styles.combine(date_styles.DEFAULT, value)


def _time_zone(value: str) -> str:
    return session_zone(value).display


def _integer(low: int, high: int) -> Validator:
    def check(value: str) -> str:
        try:
            number = int(value)
        except ValueError as exc:
            raise InvalidParameterValue(f'invalid value for integer parameter: "{value}"') from exc
        if not low <= number <= high:
            raise InvalidParameterValue(f"{number} is outside the valid range ({low} .. {high})")
        return str(number)

    return check


_DURATION_UNITS = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


@functools.lru_cache(maxsize=256)
def duration_ms(value: str) -> int:
    """A duration setting in whole milliseconds: a bare number is milliseconds, as in PostgreSQL
    (cached: statement_timeout is read at every statement's start)."""
    text = value.strip().lower()
    for unit in sorted(_DURATION_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            number, factor = text[: -len(unit)].strip(), _DURATION_UNITS[unit]
            break
    else:
        number, factor = text, 1
    try:
        milliseconds = round(float(number) * factor)
    except ValueError as exc:
        raise InvalidParameterValue(f'invalid value for parameter: "{value}"') from exc
    if not 0 <= milliseconds <= 2**31 - 1:
        raise InvalidParameterValue(
            f"{milliseconds} ms is outside the valid range (0 .. 2147483647)"
        )
    return milliseconds


def _duration_ms(value: str) -> str:
    """Normalise a duration to SHOW's form: the largest unit that divides it (``5s``, ``1min``)."""
    milliseconds = duration_ms(value)
    if milliseconds == 0:
        return "0"
    for unit, factor in sorted(_DURATION_UNITS.items(), key=lambda item: -item[1]):
        if milliseconds % factor == 0:
            return f"{milliseconds // factor}{unit}"
    return f"{milliseconds}ms"


def _bool_setting(value: str) -> str:
    lowered = value.lower()
    if lowered in ("on", "true", "yes", "1"):
        return "on"
    if lowered in ("off", "false", "no", "0"):
        return "off"
    raise InvalidParameterValue(f'parameter requires a Boolean value: "{value}"')


_MEMORY_UNITS = {"B": 1, "kB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
_TIME_UNITS = {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def _unit_table(unit: str) -> tuple[dict[str, float], float]:
    """The units a parameter's value may carry, and its own unit's size in them."""
    if unit in _TIME_UNITS:
        return dict(_TIME_UNITS), _TIME_UNITS[unit]
    size = 8 * 1024 if unit == "8kB" else _MEMORY_UNITS.get(unit, 1)
    return {k: float(v) for k, v in _MEMORY_UNITS.items()}, float(size)


def _number(parameter: Parameter, value: str) -> float:
    """A numeric value in the parameter's own unit (``64MB`` of a kB parameter is 65536)."""
    text = value.strip()
    units, base = _unit_table(parameter.unit) if parameter.unit else ({}, 1.0)
    factor = 1.0
    for name in sorted(units, key=len, reverse=True):
        if text.endswith(name) and text[: -len(name)].strip():
            text, factor = text[: -len(name)].strip(), units[name] / base
            break
    try:
        number = float(int(text, 0)) if text[:2].lower() == "0x" else float(text)
    except ValueError as exc:
        raise InvalidParameterValue(
            f'invalid value for parameter "{parameter.name}": "{value}"',
            hint=f"Valid units for this parameter are {_unit_hint(parameter.unit)}."
            if parameter.unit
            else None,
        ) from exc
    return number * factor


def _unit_hint(unit: str) -> str:
    if unit in _TIME_UNITS:
        return '"us", "ms", "s", "min", "h", and "d"'
    return '"B", "kB", "MB", "GB", and "TB"'


def _show_number(parameter: Parameter, number: float) -> str:
    """SHOW's form: an integer in the largest unit that divides it exactly, as PostgreSQL."""
    if parameter.vartype == "real":
        return f"{number:g}" + (parameter.unit if parameter.unit and number else "")
    whole = int(number)
    if not parameter.unit or whole <= 0:
        return str(whole)
    units, base = _unit_table(parameter.unit)
    amount = whole * base
    for name, size in sorted(units.items(), key=lambda item: -item[1]):
        if size >= base and amount % size == 0 and name != "us":
            return f"{int(amount // size)}{name}"
    return f"{whole}{parameter.unit}"


def _parameter_validator(parameter: Parameter) -> Validator:
    """Check and normalise a value of an ordinary PostgreSQL parameter, as SET does there."""

    def check(value: str) -> str:
        if parameter.vartype == "bool":
            return _bool_setting(value)
        if parameter.vartype == "enum":
            for choice in parameter.choices:
                if choice.lower() == value.strip().lower():
                    return choice
            raise InvalidParameterValue(
                f'invalid value for parameter "{parameter.name}": "{value}"',
                hint="Available values: " + ", ".join(parameter.choices) + ".",
            )
        if parameter.vartype in ("integer", "real"):
            number = _number(parameter, value)
            if parameter.vartype == "integer":
                number = float(round(number))
            low, high = parameter.low, parameter.high
            if low is not None and high is not None and not low <= number <= high:
                shown = int(number) if parameter.vartype == "integer" else number
                low_shown = int(low) if parameter.vartype == "integer" else low
                high_shown = int(high) if parameter.vartype == "integer" else high
                raise InvalidParameterValue(
                    f"{shown} is outside the valid range for parameter "
                    f'"{parameter.name}" ({low_shown} .. {high_shown})'
                )
            return _show_number(parameter, number)
        return value

    return check


def _from_postgres(parameter: Parameter) -> Setting:
    """A PostgreSQL parameter nyala knows by name only."""
    return Setting(
        parameter.name,
        parameter.default,
        read_only=parameter.context not in ("user", "superuser"),
        validate=_parameter_validator(parameter),
        honoured=False,
        context=parameter.context,
        vartype=parameter.vartype,
        unit=parameter.unit,
    )


def _read_timestamp(value: str) -> str:
    """``nyala.read_timestamp``: '' (read the present) or an instant, printed in UTC."""
    return canonical_instant(value) if value.strip() else ""


_ISOLATION = _one_of(
    "read committed", "repeatable read", "serializable", "read uncommitted", canonical=None
)

SETTINGS: dict[str, Setting] = {
    s.name.lower(): s
    for s in (
        Setting("application_name", "", reported=True),
        Setting(
            "client_encoding",
            "UTF8",
            reported=True,
            validate=_one_of("UTF8", "UTF-8", "unicode", canonical="UTF8"),
        ),
        Setting(
            "DateStyle",
            date_styles.DEFAULT,
            reported=True,
            validate=_date_style,
            combine=date_styles.combine,
        ),
        Setting("default_transaction_read_only", "off", reported=True, validate=_bool_setting),
        Setting("in_hot_standby", "off", reported=True, read_only=True),
        Setting("integer_datetimes", "on", reported=True, read_only=True),
        Setting(
            "IntervalStyle",
            "postgres",
            reported=True,
            validate=_one_of("postgres", "postgres_verbose", "sql_standard", "iso_8601"),
        ),
        Setting("is_superuser", "on", reported=True, read_only=True),
        Setting("server_encoding", "UTF8", reported=True, read_only=True),
        Setting("server_version", SERVER_VERSION, reported=True, read_only=True),
        Setting("server_version_num", SERVER_VERSION_NUM, read_only=True),
        Setting("session_authorization", "nyala", reported=True, read_only=True),
        Setting("role", "none", read_only=True),  # SET ROLE: session.role_switch
        Setting("standard_conforming_strings", "on", reported=True, validate=_one_of("on")),
        Setting("TimeZone", "UTC", reported=True, validate=_time_zone),
        Setting("extra_float_digits", "1", validate=_integer(-15, 3)),
        Setting("search_path", '"$user", public'),
        Setting("statement_timeout", "0", validate=_duration_ms),
        Setting("lock_timeout", "0", validate=_duration_ms),
        Setting("idle_in_transaction_session_timeout", "0", validate=_duration_ms),
        Setting("default_transaction_isolation", "read committed", validate=_ISOLATION),
        Setting("transaction_isolation", "read committed", read_only=True),
        Setting("transaction_read_only", "off", read_only=True),
        Setting("max_identifier_length", "63", read_only=True),
        Setting("lc_messages", "C"),
        Setting("lc_monetary", "C"),
        Setting("lc_numeric", "C"),
        Setting("lc_time", "C"),
        Setting("lc_collate", "C", read_only=True),
        Setting("lc_ctype", "C", read_only=True),
        Setting(
            "client_min_messages",
            "notice",
            validate=_one_of(*_MESSAGE_LEVELS),
        ),
        Setting("bytea_output", "hex", validate=_one_of("hex", "escape")),
        Setting("max_index_keys", "32", read_only=True),
        Setting("default_table_access_method", "kudu"),
        # Every read of the session as of this instant, as FOR SYSTEM_TIME AS OF reads; the
        # session is read-only meanwhile.  For Spark JDBC's sessionInitStatement.
        Setting("nyala.read_timestamp", "", validate=_read_timestamp),
    )
}
_PARAMETERS = {p.name.lower(): p for p in PARAMETERS}
for _key, _parameter in _PARAMETERS.items():
    if _key in SETTINGS:
        _own = SETTINGS[_key]
        SETTINGS[_key] = Setting(
            _own.name, _own.default, _own.reported, _own.read_only, _own.validate, True,
            _parameter.context, _parameter.vartype, _parameter.unit, _own.combine,
        )  # fmt: skip
    else:
        SETTINGS[_key] = _from_postgres(_parameter)
for _name in ("log_statement", "log_min_duration_statement", "log_connections",
              "log_disconnections"):  # fmt: skip
    SETTINGS[_name] = dataclasses.replace(SETTINGS[_name], honoured=True)  # statement_log.py
for _name in ("log_lock_waits", "deadlock_timeout"):
    SETTINGS[_name] = dataclasses.replace(SETTINGS[_name], honoured=True)  # lock_wait_log.py
for _name in ("pg_stat_statements.track", "pg_stat_statements.track_utility"):
    SETTINGS[_name] = dataclasses.replace(SETTINGS[_name], honoured=True)  # statement_tracking.py

_SEVERITY_LEVEL = {"DEBUG": 4, "LOG": 5, "INFO": 99, "NOTICE": 6, "WARNING": 7}


def _cannot_change(setting: Setting) -> CantChangeRuntimeParam:
    if setting.context == "postmaster":
        reason = "cannot be changed without restarting the server"
    elif setting.context == "sighup":
        reason = "cannot be changed now"
    elif setting.context in ("backend", "superuser-backend"):
        reason = "cannot be set after connection start"
    else:
        reason = "cannot be changed"
    return CantChangeRuntimeParam(f'parameter "{setting.name}" {reason}')


_REPORTED = tuple((key, s.name) for key, s in SETTINGS.items() if s.reported)
_KEY_OF: dict[str, str] = {}
"""Each spelling ``Settings.get`` was asked by, to its setting's key."""


_Saved = tuple[str, dict[str, str], dict[str, str], dict[str, str | None]]
"""A savepoint's name, and the values, custom values and SET LOCAL memory it saved."""


def _with_placeholders(restored: dict[str, str], current: dict[str, str]) -> dict[str, str]:
    """``restored`` custom values, keeping the names set since as empty placeholders: once a
    session has named ``a.b``, PostgreSQL reads it as '' after a rollback, not as unknown."""
    return {**dict.fromkeys(current, ""), **restored}


class SessionSettings:
    """One session's values: defaults, then startup parameters, then SET."""

    def __init__(
        self, user: str, startup: dict[str, str], server: Mapping[str, str] | None = None
    ) -> None:
        self._values: dict[str, str] = {key: s.default for key, s in SETTINGS.items()}
        for name, value in (server or {}).items():
            if name.lower() in self._values:
                self._values[name.lower()] = value
        self._values["session_authorization"] = user
        self._custom: dict[str, str] = {}
        self.version = 0
        """Counts the changes of any value: what is worked out from the values (``reported``,
        ``cached``) is kept until it moves."""
        self._derived: dict[object, object] = {}
        self._derived_version = -1
        self._reported: dict[str, str] = {}
        self._reported_version = -1
        # The values when the open transaction started (a ROLLBACK restores them), copied
        # when the transaction first changes one, and the ones SET LOCAL replaced (restored
        # when it ends either way).
        self._in_transaction = False
        self._at_start: tuple[dict[str, str], dict[str, str]] | None = None
        self._local: dict[str, str | None] = {}
        self._savepoints: list[_Saved] = []
        """Each open savepoint's name and the values, custom values and SET LOCAL memory
        when it was made: ROLLBACK TO puts them back, as PostgreSQL undoes a subtransaction's
        SETs."""
        for name, value in startup.items():
            setting = SETTINGS.get(name.lower())
            if setting is not None and not setting.read_only:
                self.set(name, value)
            elif setting is not None and setting.context in ("backend", "superuser-backend"):
                # Set at connection start only, as log_connections is by a startup option.
                checked = setting.validate(value) if setting.validate else value
                self._values[setting.name.lower()] = checked

    def _lookup(self, name: str) -> Setting | None:
        return SETTINGS.get(name.lower())

    def _changing(self) -> None:
        """A value is about to change: keep the transaction's starting values first."""
        self.version += 1
        if self._in_transaction and self._at_start is None:
            self._at_start = (dict(self._values), dict(self._custom))

    def set(self, name: str, value: str) -> None:
        setting = self._lookup(name)
        self._changing()
        if setting is None:
            if "." in name:
                self._custom[name.lower()] = value
                return
            raise UndefinedObject(f'unrecognized configuration parameter "{name}"')
        if setting.read_only:
            raise _cannot_change(setting)
        if setting.context == "superuser" and self._values["is_superuser"] != "on":
            raise InsufficientPrivilege(f'permission denied to set parameter "{setting.name}"')
        key = setting.name.lower()
        if setting.combine is not None:
            self._values[key] = setting.combine(self._values[key], value)
        else:
            self._values[key] = setting.validate(value) if setting.validate else value

    def set_local(self, name: str, value: str) -> None:
        """SET LOCAL: the value holds until the transaction ends."""
        self.remember_local(name)
        self.set(name, value)

    def remember_local(self, name: str) -> None:
        """Keep the value ``name`` has before SET LOCAL changes it, to restore at the end."""
        setting = self._lookup(name)
        key = setting.name.lower() if setting is not None else name.lower()
        if key not in self._local:
            self._local[key] = (
                self._values.get(key) if setting is not None else self._custom.get(key)
            )

    def begin_transaction(self) -> None:
        self._in_transaction = True
        self._at_start = None
        if self._local:
            self._local.clear()
        if self._savepoints:
            self._savepoints.clear()

    def savepoint(self, name: str) -> None:
        self._savepoints.append((name, dict(self._values), dict(self._custom), dict(self._local)))

    def release(self, name: str) -> None:
        """RELEASE: the savepoint (and those after it) go; what was SET since stays."""
        index = self._savepoint_index(name)
        if index is not None:
            del self._savepoints[index:]

    def rollback_to(self, name: str) -> None:
        """ROLLBACK TO: every SET and SET LOCAL since the savepoint is undone; it stays."""
        index = self._savepoint_index(name)
        if index is None:
            return
        _, values, custom, local = self._savepoints[index]
        self._changing()
        self._values, self._local = dict(values), dict(local)
        self._custom = _with_placeholders(custom, self._custom)
        del self._savepoints[index + 1 :]

    def _savepoint_index(self, name: str) -> int | None:
        for index in range(len(self._savepoints) - 1, -1, -1):
            if self._savepoints[index][0] == name:
                return index
        return None

    def end_transaction(self, committed: bool) -> None:
        """Undo SET LOCAL, and every SET of the transaction when it rolled back."""
        if self._local or (not committed and self._at_start is not None):
            self.version += 1
        self._in_transaction = False
        if not committed and self._at_start is not None:
            self._values = dict(self._at_start[0])
            self._custom = _with_placeholders(self._at_start[1], self._custom)
        elif committed:
            for key, old in self._local.items():
                if key in self._values and old is not None:
                    self._values[key] = old
                elif old is None:
                    self._custom.pop(key, None)
                else:
                    self._custom[key] = old
        self._at_start = None
        if self._local:
            self._local.clear()
        if self._savepoints:
            self._savepoints.clear()

    def honoured(self, name: str) -> bool:
        """Whether nyala acts on the setting (custom ``a.b`` names are for the client)."""
        setting = self._lookup(name)
        return setting is None or setting.honoured

    def visible(self, notices: list[DbError]) -> list[DbError]:
        """The notices ``client_min_messages`` lets through to the client."""
        if not notices:
            return notices
        level = _MESSAGE_LEVELS.index(self._values["client_min_messages"])
        return [n for n in notices if _SEVERITY_LEVEL.get(n.severity, 99) >= level]

    def describe(self) -> list[tuple[str, str, str, str, str, str]]:
        """pg_settings rows: name, value, unit, context, vartype and a short description."""
        rows = []
        for key, s in sorted(SETTINGS.items()):
            note = "" if s.honoured else "Accepted for compatibility; nyala does not act on it."
            rows.append((s.name, self._values[key], s.unit, s.context, s.vartype, note))
        return rows

    def set_fact(self, name: str, value: str) -> None:
        """Set a read-only setting from what the server knows (``is_superuser`` of the role)."""
        setting = self._lookup(name)
        assert setting is not None and setting.read_only, "facts are read-only settings"
        self._changing()
        self._values[setting.name.lower()] = value

    def reset(self, name: str) -> None:
        setting = self._lookup(name)
        self._changing()
        if setting is None:
            if self._custom.pop(name.lower(), None) is None and "." not in name:
                raise UndefinedObject(f'unrecognized configuration parameter "{name}"')
            return
        if not setting.read_only:
            self._values[setting.name.lower()] = setting.default

    def reset_all(self) -> None:
        self._changing()
        for key, setting in SETTINGS.items():
            if not setting.read_only and key != "session_authorization":
                self._values[key] = setting.default
        self._custom.clear()

    def get(self, name: str) -> str:
        key = _KEY_OF.get(name)
        if key is not None:
            return self._values[key]
        setting = self._lookup(name)
        if setting is not None:
            # The spellings code asks by are few: remember each one's key (statements read a
            # dozen settings each; two dict lookups instead of a lower() and three).
            _KEY_OF[name] = setting.name.lower()
        if setting is None:
            if name.lower() in self._custom:
                return self._custom[name.lower()]
            raise UndefinedObject(f'unrecognized configuration parameter "{name}"')
        return self._values[setting.name.lower()]

    def custom(self, name: str) -> str | None:
        """The value of the custom ``a.b`` setting ``name``, if the session set it."""
        return self._custom.get(name.lower())

    def canonical_name(self, name: str) -> str:
        setting = self._lookup(name)
        return setting.name if setting else name.lower()

    def reported(self) -> dict[str, str]:
        """The values ParameterStatus reports (asked after every statement: made again only
        when a value changed)."""
        if self._reported_version != self.version:
            values = self._values
            self._reported = {name: values[key] for key, name in _REPORTED}
            self._reported_version = self.version
        return self._reported

    def cached(self, key: object, make: Callable[[], _T]) -> _T:
        """What ``make`` works out from the values, kept under ``key`` until one changes
        (a statement reads a dozen settings: the few it needs, made ready once)."""
        if self._derived_version != self.version:
            self._derived.clear()
            self._derived_version = self.version
        try:
            return self._derived[key]  # type: ignore[return-value]  # ``make``'s, by key
        except KeyError:
            made = self._derived[key] = make()
            return made

    def all(self) -> list[tuple[str, str]]:
        return sorted((s.name, self._values[key]) for key, s in SETTINGS.items())
