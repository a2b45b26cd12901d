"""The OIDs behind a catalog query's reg* output names, each resolved once per catalog load.

A reg* output column shows names (``reg_casts``); a client reading it in binary gets the
OIDs, which the wire layer finds on the column's field (``reg_values``).  Reading a name
back to its OID parses and looks it up, so each answer is kept until the catalog rows
change, and a catalog query run again costs a dictionary lookup per distinct name.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from sql.common import reg_values
from sql.pg_catalog.functions import CatalogFunctions
from storage.errors import DbError
from storage.type_oids import TypeOid

_REG_IN: dict[int, Callable[[CatalogFunctions, str], int | None]] = {
    TypeOid.REGCLASS: CatalogFunctions.to_regclass,
    TypeOid.REGTYPE: CatalogFunctions.to_regtype,
    TypeOid.REGNAMESPACE: CatalogFunctions.regnamespace_in,
}
"""The input functions that read a reg* output's name back to its OID."""


class RegOids:
    """One session's name -> OID answers over its current catalog rows."""

    def __init__(self, functions: CatalogFunctions) -> None:
        self._functions = functions
        self._known: dict[tuple[int, str], int | None] = {}

    def forget(self) -> None:
        """The catalog rows changed: a name may now stand for another OID, or none."""
        self._known.clear()

    def field(self, field: pa.Field, array: pa.Array, type_oid: int) -> pa.Field:
        """A reg* column's field, with the OID of each name it shows (``reg_values``) when
        every one resolves; else as it is, and the names go out in both formats."""
        resolve = _REG_IN.get(type_oid)
        if resolve is None or not pa.types.is_string(array.type):
            return field
        oids: dict[str, int] = {}
        for name in pc.unique(array).to_pylist():
            if name is None:
                continue
            key = (type_oid, name)
            if key in self._known:
                oid = self._known[key]
            else:
                try:
                    oid = resolve(self._functions, name)
                except DbError:
                    oid = None
                self._known[key] = oid
            if oid is None:
                return field
            oids[name] = oid
        return reg_values.with_oids(field, oids)
