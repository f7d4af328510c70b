"""What the assignments' tests use to compare a student's answer with the reference.

Every autograder test calls the student's function and a ``seqlearn`` reference on the same
random inputs and compares them with :func:`assert_close` (or :func:`assert_all_close` for a
dict of arrays, such as gradients). A failure says *what* differs: a missing return value, a
wrong type, a wrong shape, a missing key, or the first element that differs, with both values
and how many elements differ, so a student can find the bug from the message alone::

    elman_forward, y (B=2, T=4, O=2): 6 of 16 elements differ; first at index (0, 1, 0):
    got 0.51234, expected 0.49871 (largest |difference| 0.0421)

otter assign copies this file next to the student and autograder notebooks (``files:`` in
each assignment's configuration); the tests import it inside their function bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

RTOL = 1e-7
"""Relative tolerance: float64 answers that differ only in summation order agree to ~1e-13."""
ATOL = 1e-9
"""Absolute tolerance, for elements that should be (near) zero."""


def require(function: Any, name: str) -> Callable:
    """``function`` itself, or an AssertionError saying that ``name`` was never defined."""
    if function is None:
        raise AssertionError(f"{name} is not defined: run the cell that defines it, then "
                             "this test again")
    if not callable(function):
        raise AssertionError(f"{name} should be a function, got {type(function).__name__}")
    return function


def as_array(value: Any, what: str) -> np.ndarray:
    """A float64 NumPy copy of ``value`` (array, tensor, number or nested list)."""
    if value is None:
        raise AssertionError(f"{what} is None: does the function return it?")
    if hasattr(value, "detach"):                       # a torch.Tensor, possibly on a GPU
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise AssertionError(f"{what} should be an array of numbers, got "
                             f"{type(value).__name__}") from None
    return array


def unpack(result: Any, names: tuple[str, ...], what: str) -> tuple:
    """Check that a function returned a tuple of ``len(names)`` values and return it."""
    if not isinstance(result, (tuple, list)) or len(result) != len(names):
        got = (f"a {type(result).__name__} of length {len(result)}"
               if isinstance(result, (tuple, list)) else f"a {type(result).__name__}")
        raise AssertionError(f"{what} should return a tuple ({', '.join(names)}), got {got}")
    return tuple(result)


def assert_close(got: Any, expected: Any, what: str, *, rtol: float = RTOL,
                 atol: float = ATOL) -> None:
    """Raise an AssertionError naming the shape or the first element where ``got`` differs.

    ``got`` and ``expected`` may be NumPy arrays, torch tensors or numbers; they agree when
    they have the same shape and every element satisfies ``|got - expected| <= atol + rtol *
    |expected|``. A NaN or an infinity in ``got`` never agrees.
    """
    g, e = as_array(got, what), as_array(expected, f"the reference for {what}")
    if g.shape != e.shape:
        raise AssertionError(f"{what}: shape {g.shape}, expected {e.shape}")
    bad = ~np.isfinite(g) | (np.abs(g - e) > atol + rtol * np.abs(e))
    if not bad.any():
        return
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    where = f"at index {first}" if first else "the value"
    with np.errstate(invalid="ignore"):
        largest = float(np.nanmax(np.abs(g - e)))
    raise AssertionError(
        f"{what}: {int(bad.sum())} of {g.size} elements differ; first {where}: "
        f"got {g[first]:.6g}, expected {e[first]:.6g} (largest |difference| {largest:.3g})")


def assert_all_close(got: Any, expected: Mapping[str, Any], what: str, *, rtol: float = RTOL,
                     atol: float = ATOL) -> None:
    """Compare a dict of arrays key by key (missing or extra keys are named first)."""
    if not isinstance(got, Mapping):
        raise AssertionError(f"{what} should be a dict, got {type(got).__name__}")
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    if missing or extra:
        raise AssertionError(f"{what}: missing keys {missing}, unexpected keys {extra}")
    for key in expected:
        assert_close(got[key], expected[key], f"{what}[{key!r}]", rtol=rtol, atol=atol)


def sizes(**dims: int) -> str:
    """``sizes(B=2, T=4)`` -> ``"B=2, T=4"``: the case a message describes."""
    return ", ".join(f"{k}={v}" for k, v in dims.items())
