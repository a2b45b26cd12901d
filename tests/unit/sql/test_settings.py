from __future__ import annotations

import pytest

from sql.session.settings import SessionSettings
from storage.errors import FeatureNotSupported, InvalidParameterValue, UndefinedObject


def test_startup_parameters_override_defaults_and_are_reported():
    settings = SessionSettings("alice", {"application_name": "psql", "DateStyle": "ISO"})
    reported = settings.reported()
    assert reported["application_name"] == "psql"
    assert reported["DateStyle"] == "ISO, MDY"
    assert reported["session_authorization"] == "alice"
    assert reported["server_version"].startswith("15.")


def test_set_is_case_insensitive_and_validated():
    settings = SessionSettings("u", {})
    settings.set("EXTRA_FLOAT_DIGITS", "3")
    assert settings.get("extra_float_digits") == "3"
    with pytest.raises(InvalidParameterValue):
        settings.set("extra_float_digits", "9")


def test_unknown_setting_is_42704_but_custom_dotted_names_are_allowed():
    settings = SessionSettings("u", {})
    with pytest.raises(UndefinedObject):
        settings.set("no_such_thing", "1")
    settings.set("myapp.flag", "on")
    assert settings.get("myapp.flag") == "on"


def test_non_iso_datestyle_and_other_time_zones_are_refused():
    settings = SessionSettings("u", {})
    with pytest.raises(FeatureNotSupported):
        settings.set("DateStyle", "German")
    with pytest.raises(FeatureNotSupported):
        settings.set("TimeZone", "Europe/Paris")
    settings.set("TimeZone", "Etc/UTC")


def test_reset_restores_the_default():
    settings = SessionSettings("u", {})
    settings.set("application_name", "x")
    settings.reset("application_name")
    assert settings.get("application_name") == ""


def test_durations_show_in_the_largest_unit_that_divides_them():
    from sql.session.settings import SessionSettings, duration_ms

    settings = SessionSettings("nyala", {})
    for given, shown in [("200", "200ms"), ("5000", "5s"), ("1min", "1min"), ("90s", "90s"),
                         ("0", "0"), ("1.5s", "1500ms"), ("2h", "2h")]:  # fmt: skip
        settings.set("statement_timeout", given)
        assert settings.get("statement_timeout") == shown
        assert duration_ms(shown) == duration_ms(given)
