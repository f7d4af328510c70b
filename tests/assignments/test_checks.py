"""assignments/checks.py: its messages say what differs (shape, dtype, key, element,
value, NaN and infinities by name, enough digits), float32 is tolerated unless a dtype
is asked for, and hidden tests' seeds are fresh only when the autograder sets them."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from layout import ROOT

spec = importlib.util.spec_from_file_location("checks",
                                              ROOT / "assignments" / "checks.py")
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
    assert str(info.value) == ("h (B=2): 2 of 6 elements differ; first at index "
                               "(0, 1): got -2, expected 0 (largest |difference| 2)")


def test_nan_never_agrees_and_is_named():
    with pytest.raises(AssertionError) as info:
        checks.assert_close(np.array([0.0, np.nan, 1.0]), np.array([0.0, 1e-16, 1.0]),
                            "v")
    assert str(info.value) == ("v: 1 of 3 elements differ; first at index (1,): got "
                               "NaN, expected 1e-16; your answer holds 1 NaN")


def test_infinities_are_named_and_the_largest_difference_skips_them():
    got = np.array([np.inf, -np.inf, 2.0])
    with pytest.raises(AssertionError) as info:
        checks.assert_close(got, np.array([1.0, 1.0, 1.0]), "v")
    assert str(info.value) == ("v: 3 of 3 elements differ; first at index (0,): got "
                               "inf, expected 1 (largest |difference| 1); your answer "
                               "holds 1 inf, 1 -inf")


def test_near_misses_print_enough_digits():
    with pytest.raises(AssertionError, match=r"got 1\.000001, expected 1 "):
        checks.assert_close(np.array([1.000001]), np.array([1.0]), "v")
    with pytest.raises(AssertionError, match=r"got 2\.0000012, expected 2\.0000011 "):
        checks.assert_close(torch.tensor([2.0000012], dtype=torch.float64),
                            torch.tensor([2.0000011], dtype=torch.float64), "v",
                            rtol=1e-9)


def test_float32_is_tolerated_unless_a_dtype_is_asked_for():
    expected = torch.linspace(-3, 3, 50, dtype=torch.float64).exp()
    single = expected.float()                                   # rounded to float32
    checks.assert_close(single, expected, "a float32 answer")
    with pytest.raises(AssertionError, match=r"^x: dtype float32, expected float64 "
                                             r"\(the question asks for float64\)$"):
        checks.assert_close(single, expected, "x", dtype="float64")
    wrong = single.clone()
    wrong[3] *= 1.01
    with pytest.raises(AssertionError, match=r"your answer is float32, the reference "
                                             r"float64 \(compared with float32's "
                                             r"tolerance"):
        checks.assert_close(wrong, expected, "x")
    with pytest.raises(AssertionError, match="float16 is too coarse"):
        checks.assert_close(expected.half(), expected, "x")


def test_seeds_are_fixed_for_students_and_fresh_for_the_autograder(monkeypatch):
    assert checks.seed(5) == 5
    monkeypatch.setattr(checks, "GRADING_SEED", 123)
    assert checks.seed(5) != 5 and checks.seed(5) != checks.seed(6)
    monkeypatch.setattr(checks, "GRADING_SEED", 124)
    assert checks.seed(5) != (123 * 7919 + 5) % 2 ** 31


def test_one_grading_seed_tells_nothing_of_another(monkeypatch):
    """A keyed hash: the differences between the seeds of two offsets change with the
    secret, so a student's function that is given seed(601) cannot compute seed(600)."""
    differences = set()
    for secret in range(50):
        monkeypatch.setattr(checks, "GRADING_SEED", secret)
        differences.add((checks.seed(601) - checks.seed(600)) % 2 ** 31)
        assert len({checks.seed(k) for k in range(600, 700)}) == 100
    assert len(differences) == 50


def test_within_stops_endless_work_and_passes_results_and_errors():
    import sympy

    assert checks.within(10, sum, [1, 2, 3]) == 6
    with pytest.raises(AssertionError, match="comparison failed: ZeroDivisionError"):
        checks.within(10, lambda: 1 / 0)
    with pytest.raises(AssertionError, match="did not finish within 1 s"):
        checks.within(1, lambda: [None for _ in iter(int, 1)])
    d = sympy.Symbol("d", positive=True)
    assert checks.symbolic_equal(d * (1 + d) - d, d ** 2)
    assert not checks.symbolic_equal(d, d ** 2)
    big = sympy.Pow(10, sympy.Pow(10, 12, evaluate=False), evaluate=False)
    other = sympy.Pow(10, sympy.Add(10 ** 12, 0, evaluate=False), evaluate=False)
    with pytest.raises(AssertionError, match="within 2 s"):
        checks.symbolic_equal(sympy.Add(d, big, sympy.Mul(-1, other, evaluate=False),
                                        evaluate=False), d, seconds=2)


def test_none_and_wrong_types_are_named():
    with pytest.raises(AssertionError, match="y is None: does the function return it"):
        checks.assert_close(None, np.zeros(2), "y")
    with pytest.raises(AssertionError, match="should be an array of numbers, got dict"):
        checks.assert_close({"a": 1}, np.zeros(2), "y")
    with pytest.raises(AssertionError, match=r"f should return a tuple \(y, h\), got a "
                                             r"tuple of length 3"):
        checks.unpack((1, 2, 3), ("y", "h"), "f")
    with pytest.raises(AssertionError,
                       match=r"f should return a tuple \(y, h\), got a ndarray"):
        checks.unpack(np.zeros(2), ("y", "h"), "f")


def test_dicts_name_missing_and_extra_keys_then_values():
    expected = {"W": np.ones(2), "b": np.zeros(1)}
    with pytest.raises(AssertionError,
                       match=r"missing keys \['b'\], unexpected keys \['c'\]"):
        checks.assert_all_close({"W": np.ones(2), "c": 0}, expected, "grads")
    with pytest.raises(AssertionError, match=r"^grads\['W'\]: 1 of 2 elements differ"):
        checks.assert_all_close({"W": np.array([1.0, 3.0]), "b": np.zeros(1)}, expected,
                                "grads")
    with pytest.raises(AssertionError, match="grads should be a dict, got list"):
        checks.assert_all_close([1], expected, "grads")


def test_undefined_functions_are_named():
    with pytest.raises(AssertionError,
                       match="elman_forward is not defined: run the cell"):
        checks.require(None, "elman_forward")
    with pytest.raises(AssertionError,
                       match="elman_forward should be a function, got int"):
        checks.require(3, "elman_forward")
    assert checks.require(len, "len") is len
    assert checks.sizes(B=2, T=4) == "B=2, T=4"
