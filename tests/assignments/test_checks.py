"""assignments/checks.py: its messages say what differs (shape, key, element, value)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from layout import ROOT

spec = importlib.util.spec_from_file_location("checks", ROOT / "assignments" / "checks.py")
checks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(checks)


def test_equal_arrays_and_tensors_pass():
    a = np.arange(6.0).reshape(2, 3)
    checks.assert_close(torch.tensor(a, requires_grad=True) * 1, a, "x")
    checks.assert_close(a + 1e-12, a, "x")
    checks.assert_close(3.0, np.float64(3.0), "a number")


def test_shape_is_named():
    with pytest.raises(AssertionError, match=r"^y: shape \(2, 3\), expected \(3, 2\)$"):
        checks.assert_close(np.zeros((2, 3)), np.zeros((3, 2)), "y")


def test_first_differing_element_and_count_are_named():
    expected = np.zeros((2, 3))
    got = expected.copy()
    got[1, 2], got[0, 1] = 0.5, -2.0
    with pytest.raises(AssertionError) as info:
        checks.assert_close(got, expected, "h (B=2)")
    assert str(info.value) == ("h (B=2): 2 of 6 elements differ; first at index (0, 1): "
                               "got -2, expected 0 (largest |difference| 2)")


def test_nan_never_agrees():
    with pytest.raises(AssertionError, match=r"1 of 3 elements differ; first at index \(1,\)"):
        checks.assert_close(np.array([0.0, np.nan, 1.0]), np.array([0.0, 0.0, 1.0]), "v")


def test_none_and_wrong_types_are_named():
    with pytest.raises(AssertionError, match="y is None: does the function return it"):
        checks.assert_close(None, np.zeros(2), "y")
    with pytest.raises(AssertionError, match="should be an array of numbers, got dict"):
        checks.assert_close({"a": 1}, np.zeros(2), "y")
    with pytest.raises(AssertionError, match=r"f should return a tuple \(y, h\), got a "
                                             r"tuple of length 3"):
        checks.unpack((1, 2, 3), ("y", "h"), "f")
    with pytest.raises(AssertionError, match=r"f should return a tuple \(y, h\), got a ndarray"):
        checks.unpack(np.zeros(2), ("y", "h"), "f")


def test_dicts_name_missing_and_extra_keys_then_values():
    expected = {"W": np.ones(2), "b": np.zeros(1)}
    with pytest.raises(AssertionError, match=r"missing keys \['b'\], unexpected keys \['c'\]"):
        checks.assert_all_close({"W": np.ones(2), "c": 0}, expected, "grads")
    with pytest.raises(AssertionError, match=r"^grads\['W'\]: 1 of 2 elements differ"):
        checks.assert_all_close({"W": np.array([1.0, 3.0]), "b": np.zeros(1)}, expected,
                                "grads")
    with pytest.raises(AssertionError, match="grads should be a dict, got list"):
        checks.assert_all_close([1], expected, "grads")


def test_undefined_functions_are_named():
    with pytest.raises(AssertionError, match="elman_forward is not defined: run the cell"):
        checks.require(None, "elman_forward")
    with pytest.raises(AssertionError, match="elman_forward should be a function, got int"):
        checks.require(3, "elman_forward")
    assert checks.require(len, "len") is len
    assert checks.sizes(B=2, T=4) == "B=2, T=4"
