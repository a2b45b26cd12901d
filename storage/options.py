"""StorageOptions: every storage knob, with its unit in its name and a help string.

``server/config.py`` builds one from flags, environment and TOML; storage never
reads those itself, so tests construct options directly.  Each field's help
text sits in its ``metadata["help"]``; knobs that can lose data say "unsafe".
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class StorageOptions:
    """Knobs of one storage engine; defaults suit one machine."""

    fsync: bool = field(
        default=True,
        metadata={
            "help": "fsync the WAL at commit and files when written; "
            "unsafe when false: a crash may lose committed transactions"
        },
    )
    wal_segment_size_bytes: int = field(
        default=64 * MIB,
        metadata={"help": "start a new WAL segment file once the current one reaches this size"},
    )
    lock_timeout_ms: int = field(
        default=0,
        metadata={
            "help": "give up waiting for another transaction's row lock after this long "
            "(SQLSTATE 55P03); 0 waits forever"
        },
    )
    flush_threshold_bytes: int = field(
        default=64 * MIB,
        metadata={
            "help": "flush a tablet's MemRowSet to a DiskRowSet once it holds about this much"
        },
    )
    history_max_age_s: float = field(
        default=15 * 60.0,
        metadata={
            "help": "keep row history this long for time-travel reads; older snapshots "
            "are refused with SQLSTATE 72000"
        },
    )
    scan_batch_rows: int = field(
        default=65_536,
        metadata={"help": "rows per Arrow RecordBatch produced by a tablet scan"},
    )

    maintenance_threads: int = field(
        default=1,
        metadata={
            "help": "background threads running flushes and compactions (Kudu's maintenance "
            "manager); 0 runs none: flushes then happen inline and only CHECKPOINT compacts"
        },
    )
    maintenance_polling_interval_ms: int = field(
        default=250,
        metadata={"help": "how often the maintenance manager re-scores its operations"},
    )
    flush_threshold_rows: int = field(
        default=20_000,
        metadata={
            "help": "flush a tablet's MemRowSet and DeltaMemStores once they hold this many "
            "rows read one by one (flushed rows are read a block at a time, and a bulk "
            "insert's segment rows as columns)"
        },
    )
    flush_threshold_s: float = field(
        default=120.0,
        metadata={"help": "flush a tablet's MemRowSet or DeltaMemStores once they are this old"},
    )
    minor_delta_compaction_min_files: int = field(
        default=3,
        metadata={"help": "merge a rowset's REDO delta files once it has this many"},
    )
    major_delta_compaction_min_ratio: float = field(
        default=0.1,
        metadata={
            "help": "fold REDO deltas into base data once their bytes reach this share of "
            "the rowset's base bytes"
        },
    )
    delta_compaction_min_bytes: int = field(
        default=64 * 1024,
        metadata={
            "help": "a rowset's REDO deltas smaller than this are not worth a major delta "
            "compaction (minor ones merge files whatever their size); a REDO file updating "
            "10% of a 300,000-row rowset (about 230 KiB) already makes a full scan 2.5-4x "
            "dearer"
        },
    )

    compaction_budget_mb: int = field(
        default=128,
        metadata={
            "help": "most input data one merging rowset compaction reads, in MiB (Kudu's "
            "budgeted compaction policy)"
        },
    )

    @classmethod
    def help(cls) -> dict[str, str]:
        """Map each option's name to its help text."""
        return {f.name: f.metadata["help"] for f in fields(cls)}
