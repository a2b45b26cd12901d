"""ScanStats: what one scan read and skipped, for EXPLAIN ANALYZE and the scan statistics view."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(slots=True)
class ScanStats:
    """Counters a tablet scan fills in as it goes; pass one to ``Transaction.scan(stats=...)``.

    ``predicates_on_encoded`` counts block-predicate evaluations that ran on
    dictionary codewords or run-length runs; ``predicates_on_decoded`` those
    that ran over decoded values.  ``strings_materialised`` counts string or
    binary values built for output from DiskRowSet blocks.  ``delta_stores_read``
    counts delta files (and DeltaMemStores) consulted, per block they were.
    """

    memrowset_rows_scanned: int = 0
    rowsets_read: int = 0
    rowsets_skipped: int = 0
    blocks_read: int = 0
    blocks_skipped: int = 0
    predicates_on_encoded: int = 0
    predicates_on_decoded: int = 0
    delta_rows: int = 0
    delta_stores_read: int = 0
    strings_materialised: int = 0
    rows_returned: int = 0

    def merge(self, other: ScanStats) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
