from __future__ import annotations

import pytest

from sql.common.time_zones import session_zone
from storage.errors import InvalidParameterValue


def test_iana_names_are_case_insensitive_and_keep_their_spelling():
    zone = session_zone("america/new_york")
    assert (zone.display, zone.duckdb, zone.arrow) == ("America/New_York",) * 3
    assert not zone.is_utc
    assert session_zone("UTC").is_utc


def test_hour_offsets_east_of_greenwich_as_set_time_zone_takes_them():
    zone = session_zone("-5")
    assert (zone.display, zone.duckdb, zone.arrow) == ("<-05>+05", "GMT-05:00", "-05:00")
    assert session_zone("5.5").arrow == "+05:30"
    assert session_zone(zone.display) == zone


@pytest.mark.parametrize("bad", ["Mars/Olympus_Mons", "16", "0.01"])
def test_unknown_zones_are_22023(bad):
    with pytest.raises(InvalidParameterValue):
        session_zone(bad)
