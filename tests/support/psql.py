"""Run the real psql against a server, as a user at a terminal would (less the terminal).

psql is started with ``-X`` (no ~/.psqlrc) and ``-v ON_ERROR_STOP=1`` so a
failing statement makes it exit non-zero, in the C.UTF-8 locale so its own
messages are untranslated, and with no ``PG*`` variables from the caller's
environment.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from typing import Protocol


class HasDsn(Protocol):
    @property
    def dsn(self) -> str: ...


class PsqlError(subprocess.CalledProcessError):
    """psql exited non-zero; unlike its base class, the message shows what psql printed."""

    def __str__(self) -> str:
        return f"{super().__str__()}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


def psql_path() -> str | None:
    """Return the psql binary on PATH, or None."""
    return shutil.which("psql")


def run_psql(
    target: HasDsn | str,
    args: Sequence[str] = (),
    input: str | None = None,
    *,
    check: bool = False,
    timeout_s: float = 60.0,
) -> subprocess.CompletedProcess[str]:
    """Run ``psql -X -v ON_ERROR_STOP=1 <args> <dsn>`` and return its result.

    Args:
        target: a server (anything with a ``dsn``) or a libpq connection string.
        args: psql options and arguments, e.g. ``["-c", "select 1"]`` or ``["-f", path]``.
        input: text for psql's standard input; with none given, stdin is empty.
        check: raise ``PsqlError`` (which shows psql's output) on a non-zero exit.
    """
    binary = psql_path()
    if binary is None:
        raise FileNotFoundError("psql is not on PATH")
    dsn = target if isinstance(target, str) else target.dsn
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "LC_", "LANG"))}
    env["LC_ALL"] = "C.UTF-8"
    command = [binary, "-X", "-v", "ON_ERROR_STOP=1", *args, dsn]
    result = subprocess.run(
        command,
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=timeout_s,
    )
    if check and result.returncode != 0:
        raise PsqlError(result.returncode, command, output=result.stdout, stderr=result.stderr)
    return result


def without_layout(text: str) -> str:
    """psql's output with runs of spaces and table rules folded, so that two servers' answers
    compare equal whatever column widths their values give."""
    lines = [re.sub(r"-+", "-", re.sub(r"\s+", " ", line)).strip() for line in text.splitlines()]
    return "\n".join(lines)
