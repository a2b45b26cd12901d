"""uuid input forms and the vectorised text-to-bytes decoding DuckDB scans read."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sql.common.uuid_values import canonical_uuid, uuid_bytes
from storage.errors import InvalidTextRepresentation

CANONICAL = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"


@pytest.mark.parametrize(
    "text",
    [
        CANONICAL,
        CANONICAL.upper(),
        "{" + CANONICAL + "}",
        "a0eebc999c0b4ef8bb6d6bb9bd380a11",
        "a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11",
        "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
    ],
)
def test_uuid_in_forms_read_as_postgresql_reads_them(text):
    assert canonical_uuid(text) == CANONICAL


@pytest.mark.parametrize(
    "text",
    ["nope", "", "{" + CANONICAL, CANONICAL[:-1], CANONICAL + "0", "urn:uuid:" + CANONICAL,
     "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11", "-" + CANONICAL],
)  # fmt: skip
def test_malformed_uuids_are_22p02(text):
    with pytest.raises(InvalidTextRepresentation):
        canonical_uuid(text)


@given(st.lists(st.one_of(st.none(), st.uuids()), max_size=20), st.integers(0, 3))
def test_uuid_bytes_match_python_and_keep_nulls(values, offset):
    texts = pa.array([None if v is None else str(v) for v in values], pa.string())[offset:]
    packed = uuid_bytes(texts)
    assert packed.to_pylist() == [None if v is None else v.bytes for v in values[offset:]]


@given(st.uuids(), st.uuids())
def test_canonical_text_order_is_byte_order(a, b):
    assert (str(a) < str(b)) == (a.bytes < b.bytes)
    assert uuid.UUID(canonical_uuid(str(a).upper())) == a
