"""CREATE EXTENSION and DROP EXTENSION of the extensions nyala has built in.

nyala has no loadable extensions: what it offers of PostgreSQL's
(pg_stat_statements' views and reset function; plpgsql, which every
PostgreSQL database has) is always there.  So CREATE EXTENSION of
pg_stat_statements succeeds, as the setup scripts of monitoring tools and
tutorials expect of a fresh database (with IF NOT EXISTS, PostgreSQL's
"already exists, skipping" notice), and an extension nyala does not have
fails as on a PostgreSQL without it (0A000).  Dropping a built-in one is
refused: its views stay.
"""

from __future__ import annotations

from sql.common.result import Result
from sql.frontend.statements import ExtensionStatement
from storage.errors import (
    DbError,
    DuplicateObject,
    FeatureNotSupported,
    InsufficientPrivilege,
    Notice,
    UndefinedObject,
)

BUILT_IN = frozenset({"pg_stat_statements", "plpgsql"})
_TRUSTED = frozenset({"plpgsql"})
"""Extensions a non-superuser may create (PostgreSQL's ``trusted``)."""
_EVERYWHERE = frozenset({"plpgsql"})
"""Extensions every PostgreSQL database has from the start, so CREATE finds them there."""
_CONTROL_DIR = "/usr/share/postgresql/15/extension"


def execute_extension(statement: ExtensionStatement, superuser: bool) -> Result:
    if statement.action == "CREATE":
        return _create(statement, superuser)
    return _drop(statement)


def _create(statement: ExtensionStatement, superuser: bool) -> Result:
    (name,) = statement.names
    if name not in BUILT_IN:
        raise FeatureNotSupported(
            f'extension "{name}" is not available',
            detail=f'Could not open extension control file "{_CONTROL_DIR}/{name}.control":'
            " No such file or directory.",
            hint="The extension must first be installed on the system where PostgreSQL is running.",
        )
    if statement.if_flag:
        notice = DuplicateObject(f'extension "{name}" already exists, skipping', severity="NOTICE")
        return Result(command_tag="CREATE EXTENSION", notices=[notice])
    if name in _EVERYWHERE:
        raise DuplicateObject(f'extension "{name}" already exists')
    if not superuser and name not in _TRUSTED:
        raise InsufficientPrivilege(
            f'permission denied to create extension "{name}"',
            hint="Must be superuser to create this extension.",
        )
    return Result(command_tag="CREATE EXTENSION")


def _drop(statement: ExtensionStatement) -> Result:
    notices: list[DbError] = []
    for name in statement.names:
        if name in BUILT_IN:
            raise FeatureNotSupported(f'extension "{name}" is built into nyala')
        if not statement.if_flag:
            raise UndefinedObject(f'extension "{name}" does not exist')
        notices.append(Notice(f'extension "{name}" does not exist, skipping'))
    return Result(command_tag="DROP EXTENSION", notices=notices)
