"""StatementSettings: the settings every statement reads, as plain attributes.

A prepared point read or key write reads a dozen settings (the transaction's
defaults, lock_timeout, the output styles, the statement log's and
pg_stat_statements' switches, the current role).  They change only when the
session's settings do (SET, RESET, SET ROLE, a transaction end undoing SET
LOCAL or a rolled-back SET: each moves ``SessionSettings.version``), so they
are resolved together when the version moved and read as attributes in
between: one comparison a statement instead of a look-up per setting.
"""

from __future__ import annotations

from sql.session import role_switch
from sql.session.settings import SessionSettings, duration_ms
from sql.session.statement_log import level_and_threshold
from sql.session.transaction_modes import is_repeatable_read


class StatementSettings:
    """The values of one session's settings as of ``version``; ``current()`` first."""

    __slots__ = (
        "_settings",
        "application_name",
        "inline_writes",
        "lock_timeout_ms",
        "log_level",
        "log_threshold_ms",
        "output_styles",
        "read_only",
        "repeatable_read",
        "session_settings",
        "track",
        "track_utility",
        "user",
        "version",
    )

    def __init__(self, settings: SessionSettings) -> None:
        self._settings = settings
        self.session_settings = settings
        """The settings these follow: a hot path compares versions itself (``if
        values.version != values.session_settings.version: values.current()``), no call."""
        self.version = -1
        self.read_only = False
        """A new transaction's: default_transaction_read_only, or a time-travel read."""
        self.repeatable_read = False
        """Whether default_transaction_isolation makes a new transaction REPEATABLE READ."""
        self.lock_timeout_ms: int | None = None
        """lock_timeout, None for none."""
        self.application_name = ""
        self.output_styles: tuple[int, str, str, str] = (0, "", "", "")
        """extra_float_digits, DateStyle, IntervalStyle, bytea_output."""
        self.log_level = 0
        self.log_threshold_ms: int | None = None
        self.track = True
        self.track_utility = True
        self.inline_writes = True
        """No statement log and no lock_timeout: a key write may start on the event loop."""
        self.user = ""
        """The current user (SET ROLE's, else the session user)."""
        self.current()

    def current(self) -> StatementSettings:
        """These values, resolved again first if the settings changed since."""
        settings = self._settings
        if self.version != settings.version:
            self._resolve(settings)
        return self

    def _resolve(self, settings: SessionSettings) -> None:
        get = settings.get
        self.version = settings.version
        self.read_only = get("default_transaction_read_only") == "on" or bool(
            get("nyala.read_timestamp")
        )
        self.repeatable_read = is_repeatable_read(get("default_transaction_isolation"))
        self.lock_timeout_ms = duration_ms(get("lock_timeout")) or None
        self.application_name = get("application_name")
        self.output_styles = (
            int(get("extra_float_digits")),
            get("DateStyle"),
            get("IntervalStyle"),
            get("bytea_output"),
        )
        self.log_level, self.log_threshold_ms = level_and_threshold(settings)
        self.track = get("pg_stat_statements.track") != "none"
        self.track_utility = get("pg_stat_statements.track_utility") == "on"
        self.inline_writes = get("log_statement") == "none" and self.lock_timeout_ms is None
        self.user = role_switch.current_user(settings)
