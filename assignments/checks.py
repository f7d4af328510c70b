"""What the assignments' tests use to compare a student's answer with the reference.

Every test calls the student's function and a ``seqlearn`` reference on the same random
inputs and compares them with :func:`assert_close` (or :func:`assert_all_close` for a
dict of arrays, such as gradients). A failure says *what* differs: a missing return
value, a wrong type, a wrong shape or dtype, a missing key, or the first element that
differs, with both values (as many digits as it takes to see the difference), NaN and
infinities named, and how many elements differ, so a student can find the bug from the
message alone::

    elman_forward, y (B=2, T=4, O=2): 6 of 16 elements differ; first at index (0, 1, 0):
    got 0.51234, expected 0.49871 (largest |difference| 0.0421)

A float32 answer where the question asks for no dtype is compared with float32's
tolerances; where a question asks for a dtype, the test passes ``dtype=`` and a
different one fails.

otter assign copies this file next to the student and autograder notebooks (``files:``
in each assignment's configuration); the tests import it inside their function bodies.
When the autograder grades, it loads its own copy of this file before any student code
runs and sets ``GRADING_SEED``: the hidden tests then draw fresh inputs with
:func:`seed`.
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
import select
import signal
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

RTOL = 1e-7
"""Relative tolerance: float64 answers that differ only in summation order agree to
~1e-13."""
ATOL = 1e-9
"""Absolute tolerance, for elements that should be (near) zero."""
RTOL32, ATOL32 = 1e-4, 1e-5
"""The same for an answer computed in float32 (machine epsilon 1.2e-7, not 2.2e-16);
``ATOL32`` is scaled by the largest magnitude of the reference."""

GRADING_SEED: int | None = None
"""Set by the autograder to a fresh secret number for every grading run; None in a
student's copy."""


def seed(offset: int) -> int:
    """A seed for a hidden test's random inputs: ``offset`` in a student's notebook;
    when the autograder grades, a keyed hash of ``offset`` under the secret
    ``GRADING_SEED``, so that one seed a student's function receives (or reads from a
    generator) tells nothing about the seeds of the evaluation data."""
    if GRADING_SEED is None:
        return offset
    digest = hashlib.blake2b(str(offset).encode(), digest_size=8,
                             key=str(GRADING_SEED).encode()).digest()
    return int.from_bytes(digest, "big") % 2 ** 31


def within(seconds: float, function: Callable, *args: Any) -> Any:
    """``function(*args)``, computed in a child process that is killed after
    ``seconds``: for grader-side work on a student's answer that may never end (SymPy's
    ``simplify`` of a hostile expression). Raises AssertionError when time runs out.
    Where there is no ``fork`` (Windows), the call runs here, without a limit."""
    if not hasattr(os, "fork"):
        return function(*args)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # the child: compute, send, vanish
        os.close(read)
        try:
            try:
                payload = pickle.dumps(("ok", function(*args)))
            except BaseException as error:       # noqa: BLE001 - sent to the parent
                payload = pickle.dumps(("error", f"{type(error).__name__}: {error}"))
            with os.fdopen(write, "wb") as out:
                out.write(payload)
        finally:
            os._exit(0)
    os.close(write)
    chunks, deadline = [], time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise AssertionError(f"the comparison did not finish within "
                                     f"{seconds:g} s: simplify your answer")
            chunk = os.read(read, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    if not chunks:
        raise AssertionError("the comparison ended without a result")
    status, value = pickle.loads(b"".join(chunks))
    if status == "error":
        raise AssertionError(f"the comparison failed: {value}")
    return value


def _difference_is_zero(got: Any, expected: Any) -> bool:
    import sympy

    return bool(sympy.simplify(sympy.sympify(got) - expected) == 0)


def symbolic_equal(got: Any, expected: Any, seconds: float = 30.0) -> bool:
    """Whether ``simplify(got - expected)`` is 0, within ``seconds`` (see
    :func:`within`)."""
    return within(seconds, _difference_is_zero, got, expected)


def require(function: Any, name: str) -> Callable:
    """``function`` itself, or an AssertionError saying that ``name`` was never
    defined."""
    if function is None:
        raise AssertionError(f"{name} is not defined: run the cell that defines it, "
                             "then this test again")
    if not callable(function):
        kind = getattr(function, "type_name", type(function).__name__)
        raise AssertionError(f"{name} should be a function, got {kind}")
    return function


def dtype_name(value: Any) -> str | None:
    """``"float32"``, ``"int64"``, ... for arrays, tensors and NumPy scalars; None
    otherwise."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return None
    return str(dtype).removeprefix("torch.")


def as_array(value: Any, what: str) -> np.ndarray:
    """A float64 (or complex128) NumPy copy of ``value`` (array, tensor, number or
    list)."""
    if value is None:
        raise AssertionError(f"{what} is None: does the function return it?")
    if hasattr(value, "detach"):                   # a torch.Tensor, possibly on a GPU
        value = value.detach().cpu()
        if value.dtype.is_complex:
            value = value.numpy()
        else:
            value = value.double().numpy()
    try:
        array = np.asarray(value)
        if array.dtype.kind == "c":
            return array.astype(np.complex128)
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        kind = getattr(value, "type_name", type(value).__name__)
        raise AssertionError(f"{what} should be an array of numbers, "
                             f"got {kind}") from None
    return array


def unpack(result: Any, names: tuple[str, ...], what: str) -> tuple:
    """Check that a function returned a tuple of ``len(names)`` values and return it."""
    if not isinstance(result, (tuple, list)) or len(result) != len(names):
        got = (f"a {type(result).__name__} of length {len(result)}"
               if isinstance(result, (tuple, list)) else
               f"a {getattr(result, 'type_name', type(result).__name__)}")
        raise AssertionError(f"{what} should return a tuple ({', '.join(names)}), "
                             f"got {got}")
    return tuple(result)


def _number(x: complex | float, digits: int) -> str:
    """A value as a reader should see it: NaN, inf and -inf by name, else ``digits``
    digits."""
    if isinstance(x, complex) or np.iscomplexobj(x):
        return f"{complex(x):.{digits}g}"
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def _digits(got: Any, expected: Any) -> int:
    """Enough significant digits to tell ``got`` from ``expected`` (6 to 17)."""
    try:
        g, e = complex(got), complex(expected)
    except (TypeError, ValueError):
        return 6
    if not (np.isfinite(g) and np.isfinite(e)) or g == e:
        return 6
    scale = max(abs(g), abs(e))
    relative = abs(g - e) / scale if scale else 1.0
    return int(min(17, max(6, math.ceil(-math.log10(max(relative, 1e-17))) + 2)))


def assert_close(got: Any, expected: Any, what: str, *, rtol: float | None = None,
                 atol: float | None = None, dtype: str | None = None) -> None:
    """Raise an AssertionError naming the dtype, shape or first element where ``got``
    differs.

    ``got`` and ``expected`` may be NumPy arrays, torch tensors or numbers; they agree
    when they have the same shape and every element satisfies ``|got - expected| <= atol
    + rtol * |expected|``. A NaN or an infinity in ``got`` agrees only with the same in
    ``expected``.
    ``dtype`` (``"float64"``, ...) is the dtype the question asks for: another one
    fails. Without it, a float32 or complex64 answer is compared with ``RTOL32`` and
    ``ATOL32`` (unless the test gives ``rtol``/``atol``), and a float16 one is refused
    as too coarse.
    """
    got_dtype, expected_dtype = dtype_name(got), dtype_name(expected)
    if dtype is not None and got_dtype is not None and got_dtype != dtype:
        raise AssertionError(f"{what}: dtype {got_dtype}, expected {dtype} (the "
                             f"question asks for {dtype})")
    if got_dtype in ("float16", "bfloat16"):
        raise AssertionError(f"{what}: dtype {got_dtype} is too coarse to check; "
                             "compute in float32 or float64")
    single = got_dtype in ("float32", "complex64") and expected_dtype not in (
        "float32", "complex64", "float16", "bfloat16")
    g, e = as_array(got, what), as_array(expected, f"the reference for {what}")
    if g.shape != e.shape:
        raise AssertionError(f"{what}: shape {g.shape}, expected {e.shape}")
    if rtol is None:
        rtol = RTOL32 if single else RTOL
    if atol is None:
        finite = np.abs(e[np.isfinite(e)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        atol = ATOL32 * scale if single else ATOL
    with np.errstate(invalid="ignore", over="ignore"):
        both_same_special = (np.isnan(g) & np.isnan(e)) | (np.isinf(g) & (g == e))
        close = np.abs(g - e) <= atol + rtol * np.abs(e)
        bad = ~both_same_special & (~np.isfinite(g) | ~np.isfinite(e) | ~close)
    if not bad.any():
        return
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    where = f"at index {first}" if first else "the value"
    digits = _digits(g[first], e[first])
    message = (f"{what}: {int(bad.sum())} of {g.size} elements differ; first {where}: "
               f"got {_number(g[first], digits)}, expected {_number(e[first], digits)}")
    finite = bad & np.isfinite(g) & np.isfinite(e)
    if finite.any():
        largest = float(np.max(np.abs(g[finite] - e[finite])))
        message += f" (largest |difference| {largest:.3g})"
    real = g.real if np.iscomplexobj(g) else g
    specials = [f"{int(n)} {name}" for n, name in (
        ((np.isnan(g) & bad).sum(), "NaN"), ((np.isposinf(real) & bad).sum(), "inf"),
        ((np.isneginf(real) & bad).sum(), "-inf")) if n]
    if specials:
        message += f"; your answer holds {', '.join(specials)}"
    if None not in (got_dtype, expected_dtype) and got_dtype != expected_dtype:
        message += f"; your answer is {got_dtype}, the reference {expected_dtype}"
        if single:
            message += f" (compared with float32's tolerance, rtol={rtol:g})"
    raise AssertionError(message)


def assert_all_close(got: Any, expected: Mapping[str, Any], what: str, *,
                     rtol: float | None = None, atol: float | None = None,
                     dtype: str | None = None) -> None:
    """Compare a dict of arrays key by key (missing or extra keys are named first)."""
    if not isinstance(got, Mapping):
        kind = getattr(got, "type_name", type(got).__name__)
        raise AssertionError(f"{what} should be a dict, got {kind}")
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected), key=str)
    if missing or extra:
        raise AssertionError(f"{what}: missing keys {missing}, unexpected keys {extra}")
    for key in expected:
        assert_close(got[key], expected[key], f"{what}[{key!r}]", rtol=rtol, atol=atol,
                     dtype=dtype)


def sizes(**dims: int) -> str:
    """``sizes(B=2, T=4)`` -> ``"B=2, T=4"``: the case a message describes."""
    return ", ".join(f"{k}={v}" for k, v in dims.items())
