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


def test_datestyle_keeps_the_part_a_value_does_not_name_and_refuses_conflicts():
    settings = SessionSettings("u", {"DateStyle": "SQL"})
    assert settings.get("DateStyle") == "SQL, MDY"
    settings.set("DateStyle", "DMY")
    assert settings.get("DateStyle") == "SQL, DMY"
    settings.set("DateStyle", "Postgres")
    assert settings.get("DateStyle") == "Postgres, DMY"
    with pytest.raises(InvalidParameterValue):
        settings.set("DateStyle", "ISO, German")
    assert settings.get("DateStyle") == "Postgres, DMY"
    settings.reset("DateStyle")
    settings.set("DateStyle", "German")
    assert settings.get("DateStyle") == "German, DMY"


def test_interval_styles_are_postgresqls_four():
    settings = SessionSettings("u", {})
    for style in ("postgres_verbose", "sql_standard", "iso_8601", "postgres"):
        settings.set("IntervalStyle", style.upper())
        assert settings.get("IntervalStyle") == style
    with pytest.raises(InvalidParameterValue):
        settings.set("IntervalStyle", "german")


def test_time_zones_are_iana_names_or_offsets_shown_as_postgresql_shows_them():
    settings = SessionSettings("u", {"TimeZone": "europe/paris"})
    assert settings.get("TimeZone") == "Europe/Paris"
    for given, shown in [("Etc/UTC", "Etc/UTC"), ("utc", "UTC"), ("-5", "<-05>+05"),
                         ("5.5", "<+05:30>-05:30"), ("<-05>+05", "<-05>+05")]:  # fmt: skip
        settings.set("TimeZone", given)
        assert settings.get("TimeZone") == shown
    with pytest.raises(InvalidParameterValue):
        settings.set("TimeZone", "Mars/Olympus_Mons")


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


def test_every_postgresql_parameter_is_known_with_its_default():
    from sql.session.pg_parameters import PARAMETERS

    settings = SessionSettings("u", {})
    assert len(PARAMETERS) > 300
    for parameter in PARAMETERS:
        settings.get(parameter.name)
    assert settings.get("work_mem") == "4MB"
    assert settings.get("escape_string_warning") == "on"
    assert settings.get("shared_buffers") == "128MB"


def test_ordinary_parameters_are_checked_and_shown_as_postgresql_shows_them():
    settings = SessionSettings("u", {})
    for given, shown in [("65536", "64MB"), ("1GB", "1GB"), ("1536kB", "1536kB")]:
        settings.set("work_mem", given)
        assert settings.get("work_mem") == shown
    settings.set("enable_seqscan", "false")
    assert settings.get("enable_seqscan") == "off"
    settings.set("constraint_exclusion", "PARTITION")
    assert settings.get("constraint_exclusion") == "partition"
    for name, value in [("work_mem", "12"), ("work_mem", "lots"), ("enable_seqscan", "nah"),
                        ("constraint_exclusion", "sometimes"), ("random_page_cost", "-1")]:  # fmt: skip
        with pytest.raises(InvalidParameterValue):
            settings.set(name, value)


def test_parameters_fixed_at_server_start_cannot_be_set():
    from storage.errors import CantChangeRuntimeParam

    settings = SessionSettings("u", {})
    for name in ("max_connections", "fsync", "server_version", "block_size"):
        with pytest.raises(CantChangeRuntimeParam):
            settings.set(name, "1")


def test_parameters_nyala_does_not_act_on_say_so():
    settings = SessionSettings("u", {})
    assert not settings.honoured("work_mem")
    assert settings.honoured("statement_timeout")
    assert settings.honoured("myapp.flag")
    rows = {row[0]: row for row in settings.describe()}
    assert "nyala does not act on it" in rows["work_mem"][5]
    assert rows["statement_timeout"][5] == ""
    assert rows["work_mem"][2:5] == ("kB", "user", "integer")


def test_client_min_messages_filters_notices():
    settings = SessionSettings("u", {})
    notice = FeatureNotSupported("n", severity="NOTICE")
    warning = FeatureNotSupported("w", severity="WARNING")
    assert settings.visible([notice, warning]) == [notice, warning]
    settings.set("client_min_messages", "warning")
    assert settings.visible([notice, warning]) == [warning]
    settings.set("client_min_messages", "error")
    assert settings.visible([notice, warning]) == []
