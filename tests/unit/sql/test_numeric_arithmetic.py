from __future__ import annotations

import pyarrow as pa
import pytest

from sql.execution.numeric_arithmetic import _exact_arrays, divide
from storage.errors import DivisionByZero, NumericValueOutOfRange


@pytest.mark.parametrize(
    ("dividend", "divisor", "scale", "quotient"),
    [
        ("10", "3", 16, "3.3333333333333333"),
        ("2", "3", 4, "0.6667"),
        ("-2", "3", 4, "-0.6667"),
        ("1", "-8", 2, "-0.13"),  # half away from zero, as numeric_div
        ("12345678901234567893.47", "3", 16, "4115226300411522631.1566666666666667"),
        ("0", "7", 3, "0.000"),
    ],
)
def test_division_is_exact_and_rounds_half_away_from_zero(dividend, divisor, scale, quotient):
    assert divide(dividend, divisor, scale) == quotient


def test_division_by_zero_and_overflow_are_errors():
    with pytest.raises(DivisionByZero):
        divide("1", "0.000", 16)
    with pytest.raises(NumericValueOutOfRange):
        divide("1" + "0" * 30, "0.001", 16)


def test_stored_unconstrained_values_never_round():
    fine = pa.array(["1.5", None, "0.1234567890", "1e-3", "100.0000000000000", "twelve"])
    assert _exact_arrays(fine).to_pylist() == [
        "1.5",
        None,
        "0.1234567890",
        "0.001",
        "100.0000000000000",
        "twelve",
    ]
    for too_fine in ("0.12345678901", "1e-11"):
        with pytest.raises(NumericValueOutOfRange):
            _exact_arrays(pa.array([too_fine]))
