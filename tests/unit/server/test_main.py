"""The ``nyala`` command line: subcommand and flag errors end with usage, before any I/O."""

from __future__ import annotations

import pytest

from server.__main__ import main


@pytest.mark.parametrize(
    "argv",
    [[], ["bogus"], ["serve", "--port", "70000"], ["serve", "--log-level", "loud"]],
)
def test_bad_command_lines_exit_with_usage(argv, capsys):
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert "usage: nyala" in capsys.readouterr().err


def test_bad_environment_value_exits_with_usage(monkeypatch, capsys):
    monkeypatch.setenv("NYALA_PORT", "not-a-number")
    with pytest.raises(SystemExit):
        main(["serve"])
    assert "usage: nyala" in capsys.readouterr().err
