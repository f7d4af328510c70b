"""Shared pieces of the property-based tests: the registry of covered public names,
the list of public names, and input generators.

Every public name of ``seqlearn`` (a function or class defined in a module, not starting with
``_``; ``seqlearn.plots`` and ``seqlearn.widgets`` are the book's display helpers and are left
out) needs a property test. Register one by decorating it::

    @covers("seqlearn.scan.linear_scan", "seqlearn.scan.blocked_scan")
    @given(...)
    def test_...(...):

``test_properties_api.py`` fails and lists the names that no decorated test covers. A
property test lives with the other tests of its module, in ``test_<module>.py``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any, Callable

import numpy as np
import pytest
import torch
from hypothesis import strategies as st

import seqlearn

EXAMPLES = 8  # examples per property test in `make test`
DEEP_FACTOR = 20  # `make test-deep` runs 20 times as many
DISPLAY_MODULES = ("seqlearn.plots", "seqlearn.widgets")
F64 = torch.float64

COVERED: dict[str, list[str]] = {}


def covers(*names: str) -> Callable:
    """Register the decorated test as the property test of the public ``names``."""
    def register(test: Callable) -> Callable:
        for name in names:
            COVERED.setdefault(name, []).append(test.__name__)
        return test
    return register


def public_names() -> list[str]:
    """``module.name`` of every public function and class of seqlearn (pkgutil discovery)."""
    found = []
    for info in pkgutil.walk_packages(seqlearn.__path__, "seqlearn."):
        if info.name in DISPLAY_MODULES:
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                    and getattr(obj, "__module__", None) == info.name):
                found.append(f"{info.name}.{name}")
    return sorted(found)


# --------------------------------------------------------------------------- generators

seeds = st.integers(0, 2**31 - 1)
sizes = st.integers(1, 4)
not_bools = st.sampled_from(["no", 1, 0, None, 1.0, "True"])
not_reals = st.sampled_from(["1", None, True, [1.0]])
non_finite = st.sampled_from([float("nan"), float("inf"), -float("inf")])


def randn(seed: int, *shape: int, dtype: torch.dtype = F64) -> torch.Tensor:
    """A reproducible standard-normal tensor (cheaper than drawing every entry)."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def refuses(fn: Callable, *args: Any, **kwargs: Any) -> Exception:
    """The call must raise ``ValueError`` or ``TypeError`` (the documented errors), nothing else."""
    with pytest.raises((ValueError, TypeError)) as info:
        fn(*args, **kwargs)
    return info.value


def numpy_of(x: torch.Tensor) -> np.ndarray:
    return x.detach().numpy()
