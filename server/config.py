"""Config: every server knob, with its default, unit and help, from flags and NYALA_* variables.

Each field of the frozen ``Config`` dataclass is one option.  Its name
carries its unit (``max_message_size_bytes``), its metadata the help text.
The command-line flags are generated from the fields (``--data-dir``; a
boolean that defaults to on gets ``--no-<name>``), and an environment
variable ``NYALA_<FIELD_UPPER>`` replaces a default.  Precedence: flag, then
environment, then default.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storage.options import StorageOptions

ENV_PREFIX = "NYALA_"
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
AUTH_METHODS = ("trust", "password")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _option(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


_STORAGE_FIELDS = {f.name: f for f in dataclasses.fields(StorageOptions)}


def _storage_option(name: str) -> Any:
    """A server option that sets the storage knob ``name``, with its default and help."""
    source = _STORAGE_FIELDS[name]
    return _option(source.default, source.metadata["help"])


@dataclass(frozen=True, slots=True)
class Config:
    """The server's configuration; defaults work for one machine."""

    host: str = _option("127.0.0.1", "address to listen on")
    port: int = _option(5433, "TCP port to listen on; 0 picks a free port")
    data_dir: Path = _option(Path("./nyala-data"), "directory holding the database's files")
    database: str = _option("nyala", "name of the database clients connect to")
    log_level: str = _option("INFO", "logging level: " + ", ".join(_LOG_LEVELS))
    fsync: bool = _option(True, "fsync the write-ahead log on commit")
    max_message_size_bytes: int = _option(
        64 * 1024 * 1024, "largest protocol message accepted; a larger one ends the connection"
    )
    result_chunk_rows: int = _option(8192, "rows encoded per step when sending a result")
    write_buffer_bytes: int = _option(
        256 * 1024, "buffered output that is sent before a sync point is reached"
    )
    max_connections: int = _option(
        100, "most client sessions at once; one more is refused with 53300, as PostgreSQL does"
    )
    superuser_reserved_connections: int = _option(
        3, "of max_connections, slots only superusers may take, so an admin can always get in"
    )
    query_memory_limit_mb: int = _option(
        4096,
        "memory the relational operators of all running queries may hold together; "
        "a query needing more fails with 53200",
    )
    buffered_rows_limit: int = _option(
        50_000_000,
        "rows one statement may hold in the server at once (the source of an INSERT ... SELECT,"
        " UPDATE or DELETE, a WITH HOLD cursor); a statement needing more fails with 53200",
    )
    shutdown_grace_s: float = _option(
        10.0, "on SIGTERM/SIGINT, time running statements get before they are cancelled"
    )
    auth: str = _option(
        "trust", "client authentication: trust (no password) or password (SCRAM-SHA-256 or md5)"
    )
    superuser: str = _option(
        "nyala", "role created as superuser on the first start, with the password in NYALA_PASSWORD"
    )
    tls_cert: str = _option("", "PEM certificate (chain) file; with --tls-key, clients may use TLS")
    tls_key: str = _option("", "PEM private key file of --tls-cert")
    tls_required: bool = _option(False, "refuse clients that do not use TLS")
    http_port: int = _option(
        -1,
        "serve the status page and /metrics over HTTP on this port; 0 picks a free port, "
        "-1 serves none",
    )
    http_host: str = _option("127.0.0.1", "address the status page listens on")
    # Storage knobs: names, defaults and help are StorageOptions' (storage/options.py).
    flush_threshold_bytes: int = _storage_option("flush_threshold_bytes")
    flush_threshold_rows: int = _storage_option("flush_threshold_rows")
    flush_threshold_s: float = _storage_option("flush_threshold_s")
    history_max_age_s: float = _storage_option("history_max_age_s")
    maintenance_threads: int = _storage_option("maintenance_threads")
    maintenance_polling_interval_ms: int = _storage_option("maintenance_polling_interval_ms")
    minor_delta_compaction_min_files: int = _storage_option("minor_delta_compaction_min_files")
    major_delta_compaction_min_ratio: float = _storage_option("major_delta_compaction_min_ratio")
    delta_compaction_min_bytes: int = _storage_option("delta_compaction_min_bytes")
    compaction_budget_mb: int = _storage_option("compaction_budget_mb")

    def storage_options(self) -> StorageOptions:
        """The storage engine's options: fsync and every storage knob set here."""
        knobs = {name: getattr(self, name) for name in _STORAGE_FIELDS if hasattr(self, name)}
        return StorageOptions(**knobs)

    def __post_init__(self) -> None:
        if self.log_level.upper() not in _LOG_LEVELS:
            raise ValueError(f"log_level must be one of {', '.join(_LOG_LEVELS)}")
        for name in (
            "max_message_size_bytes",
            "result_chunk_rows",
            "query_memory_limit_mb",
            "buffered_rows_limit",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if not 0 <= self.superuser_reserved_connections < self.max_connections:
            raise ValueError("superuser_reserved_connections must be below max_connections")
        if not 0 <= self.port <= 65535:
            raise ValueError("port must be between 0 and 65535")
        if not -1 <= self.http_port <= 65535:
            raise ValueError("http_port must be between -1 (off) and 65535")
        if self.auth not in AUTH_METHODS:
            raise ValueError(f"auth must be one of {', '.join(AUTH_METHODS)}")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("tls_cert and tls_key go together")
        if self.tls_required and not self.tls_cert:
            raise ValueError("tls_required needs tls_cert and tls_key")

    @classmethod
    def from_args(
        cls, argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
    ) -> Config:
        """Build a Config from command-line arguments and environment variables."""
        parser = argparse.ArgumentParser(prog="nyala serve", description="Run the nyala server.")
        add_arguments(parser, environ)
        return from_namespace(parser.parse_args(argv))


def _kind(f: dataclasses.Field[Any]) -> type:
    return type(f.default)


def _parse(kind: Any, text: str, name: str) -> Any:
    if kind is bool:
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"{name}: expected a boolean, got {text!r}")
    if issubclass(kind, Path):
        return Path(text)
    return kind(text)


def _defaults(environ: Mapping[str, str]) -> dict[str, Any]:
    values = {}
    for f in dataclasses.fields(Config):
        env_name = ENV_PREFIX + f.name.upper()
        values[f.name] = (
            _parse(_kind(f), environ[env_name], env_name) if env_name in environ else f.default
        )
    return values


def add_arguments(
    parser: argparse.ArgumentParser, environ: Mapping[str, str] | None = None
) -> None:
    """Add one flag per Config field, with defaults already overridden by the environment."""
    defaults = _defaults(os.environ if environ is None else environ)
    for f in dataclasses.fields(Config):
        flag = "--" + f.name.replace("_", "-")
        # argparse expands %-formats in help; a literal "10%" in a knob's help must survive.
        help_text = f"{f.metadata['help']} (env {ENV_PREFIX}{f.name.upper()})".replace("%", "%%")
        kind = _kind(f)
        if kind is bool and f.default:
            help_text += "; unsafe: may lose committed data" if f.name == "fsync" else ""
            parser.add_argument(
                "--no-" + f.name.replace("_", "-"),
                dest=f.name,
                action="store_false",
                default=defaults[f.name],
                help=f"do not {help_text}",
            )
        elif kind is bool:
            parser.add_argument(
                flag, dest=f.name, action="store_true", default=defaults[f.name], help=help_text
            )
        else:
            parser.add_argument(
                flag,
                dest=f.name,
                type=Path if issubclass(kind, Path) else kind,
                default=defaults[f.name],
                help=f"{help_text}; default {defaults[f.name]}",
            )


def from_namespace(namespace: argparse.Namespace) -> Config:
    """Build a Config from parsed arguments (extra attributes are ignored)."""
    names = {f.name for f in dataclasses.fields(Config)}
    return Config(**{k: v for k, v in vars(namespace).items() if k in names})
