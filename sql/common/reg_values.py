"""reg* result columns: shown by name, sent in binary as OIDs.

A catalog query's reg* output column holds names (what regclass_out and friends show and
what every reader inside the server takes); its Arrow field carries the OID of each name
it holds under ``OIDS_KEY``, so the wire layer can send PostgreSQL's binary form (the
4-byte OID, as regclass_send does) without a catalog lookup.  A name shown by a reg*
output function stands for one OID within a result, so the map is by name, and slicing a
batch keeps it.
"""

from __future__ import annotations

import json

import pyarrow as pa

OIDS_KEY = b"nyala.reg_oids"


def with_oids(field: pa.Field, oids: dict[str, int]) -> pa.Field:
    """``field`` carrying the OID of each name its column shows."""
    return field.with_metadata({**(field.metadata or {}), OIDS_KEY: json.dumps(oids)})


def oids_of(field: pa.Field) -> dict[str, int] | None:
    """The name -> OID map ``with_oids`` put on ``field``, or None."""
    raw = (field.metadata or {}).get(OIDS_KEY)
    return None if raw is None else dict(json.loads(raw))
