"""Input validation shared by every public function of seqlearn.

Errors name what was expected and what arrived, e.g.::

    ValueError: x must have shape (B, T, D=3), got (4, 7, 5)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch


_ORIGIN = "(origin)"  # key of ``bound`` that records which argument fixed each size


def _describe(spec: list[str], sizes: dict[str, int]) -> str:
    parts = [f"{n}={sizes[n]}" if n in sizes and n != "..." else n for n in spec]
    return "(" + ", ".join(parts) + ")"


def _origins(spec: list[str], bound: dict | None) -> str:
    """`` (B, T as in q)``: the dimensions of ``spec`` an earlier argument fixed."""
    origin = (bound or {}).get(_ORIGIN, {})
    by_arg: dict[str, list[str]] = {}
    for dim in spec:
        if dim in origin:
            by_arg.setdefault(origin[dim], []).append(dim)
    return "".join(f" ({', '.join(dims)} as in {arg})" for arg, dims in by_arg.items())


def check_shape(x: Any, name: str, spec: str, sizes: dict[str, int] | None = None,
                bound: dict[str, int] | None = None) -> dict[str, int]:
    """Check that ``x`` has the dimensions named in ``spec`` and return their sizes.

    ``spec`` is a space-separated list of dimension names, e.g. ``"B T D"``; a leading
    ``...`` accepts any number of batch dimensions (returned under the key ``"..."`` as
    a tuple). ``sizes`` fixes named dimensions to required values; ``bound`` is updated
    in place with the sizes found (the leading ``...`` dimensions included), so several
    arguments can be checked against each other, and an error names the argument that
    fixed a size::

        dims = check_shape(x, "x", "B T D", sizes={"D": 3})
        check_shape(h0, "h0", "B H", sizes={"B": dims["B"], "H": 5})
        lead: dict = {}
        check_shape(q, "q", "... Tq d", bound=lead)
        check_shape(k, "k", "... Tk d", bound=lead)  # leading dimensions and d of q
    """
    if not hasattr(x, "shape"):
        raise TypeError(f"{name} must be a tensor or array, got {type(x).__name__}")
    names = spec.split()
    required = dict(sizes or {})
    if bound:
        required.update({k: v for k, v in bound.items() if k in names})
    shape = tuple(int(s) for s in x.shape)
    variadic = bool(names) and names[0] == "..."
    fixed = names[1:] if variadic else names
    wanted = f"{name} must have shape {_describe(names, required)}"
    if ((variadic and len(shape) < len(fixed))
            or (not variadic and len(shape) != len(fixed))):
        raise ValueError(f"{wanted}, got {shape}{_origins(fixed, bound)}")
    found: dict[str, Any] = {}
    for dim, size in zip(fixed, shape[len(shape) - len(fixed):]):
        # a repeated name, e.g. "H H", means equal sizes
        if found.setdefault(dim, size) != size:
            raise ValueError(f"{wanted} with equal sizes for the repeated {dim}, got "
                             f"{shape}")
    for dim, want in required.items():
        if dim in found and found[dim] != want:
            raise ValueError(f"{wanted}, got {shape}{_origins([dim], bound)}")
    if variadic:
        found["..."] = shape[: len(shape) - len(fixed)]
        if "..." in required and found["..."] != tuple(required["..."]):
            origin = (bound or {}).get(_ORIGIN, {})
            source = origin.get("...", "the arguments before it")
            raise ValueError(f"{name} must have the leading (batch) dimensions "
                             f"{tuple(required['...'])} of {source}, got shape {shape}")
    if bound is not None:
        origin = bound.setdefault(_ORIGIN, {})
        for dim in found:
            origin.setdefault(dim, name)
        bound.update(found)
    return found


def check_floating(x: Any, name: str) -> None:
    """Raise ``TypeError`` unless ``x`` is a floating-point torch tensor or NumPy array."""
    if isinstance(x, torch.Tensor):
        if not x.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    elif isinstance(x, np.ndarray):
        if not np.issubdtype(x.dtype, np.floating):
            raise TypeError(f"{name} must be a floating-point array, got dtype {x.dtype}")
    else:
        raise TypeError(f"{name} must be a torch.Tensor or numpy.ndarray, got {type(x).__name__}")


def check_tensor(x: Any, name: str, *, floating: bool = True) -> torch.Tensor:
    """Raise ``TypeError`` unless ``x`` is a torch tensor (of a floating dtype by default).

    The torch code of seqlearn calls this instead of :func:`check_floating`, which also
    accepts NumPy arrays: a NumPy array would fail later inside torch, or silently mean
    something else (``ndarray.transpose(-2, -1)`` is not ``Tensor.transpose(-2, -1)``).
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if floating:
        check_floating(x, name)
    return x


def check_nonempty(x: Any, name: str, spec: str, dims: str) -> dict[str, int]:
    """:func:`check_shape` with ``spec``, and ``ValueError`` when a size in ``dims`` is zero.

    For functions whose maths needs at least one element along those dimensions (e.g. one
    time step): ``check_nonempty(x, "x", "B T D", "T")``.
    """
    unknown = [dim for dim in dims.split() if dim not in spec.split() or dim == "..."]
    if unknown:  # a wrong call of this helper, not a wrong x
        raise ValueError(f"dims must name dimensions of spec {spec!r}, got "
                         f"{' '.join(unknown)!r}")
    found = check_shape(x, name, spec)
    for dim in dims.split():
        if found[dim] < 1:
            raise ValueError(f"{name} must have {dim} >= 1 (shape ({', '.join(spec.split())})), "
                             f"got shape {tuple(int(s) for s in x.shape)}")
    return found


def check_bool(value: Any, name: str) -> bool:
    """Raise ``TypeError`` unless ``value`` is a ``bool`` (``"no"`` or ``1`` are not flags)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


def check_real(value: Any, name: str, *, minimum: float | None = None,
               positive: bool = False, finite: bool = True) -> float:
    """A real number (not a bool): ``TypeError`` otherwise; ``ValueError`` when out of range.

    ``finite`` refuses NaN and infinity (and an int too large for a float; with
    ``finite=False`` such an int counts as infinity); ``positive`` requires
    ``value > 0``; ``minimum`` requires ``value >= minimum``. Returns ``float(value)``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        value = float(value)
    except OverflowError:  # an int beyond the largest float (10**400)
        if finite:
            digits = len(str(abs(int(value))))
            raise ValueError(f"{name} must be a finite number, got an int too large "
                             f"for a float ({digits} digits)") from None
        value = math.inf if value > 0 else -math.inf
    if math.isnan(value) or (finite and math.isinf(value)):
        raise ValueError(f"{name} must be a finite number, got {value}")
    if positive and not value > 0:
        raise ValueError(f"{name} must be positive, got {value}")
    if minimum is not None and not value >= minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def check_same_dtype(name_a: str, a: Any, name_b: str, b: Any) -> None:
    """Raise ``TypeError`` when two arrays that are combined have different dtypes."""
    for name, x in ((name_a, a), (name_b, b)):
        if not hasattr(x, "dtype"):
            raise TypeError(f"{name} must be a tensor or array, got {type(x).__name__}")
    if a.dtype != b.dtype:
        raise TypeError(f"{name_a} and {name_b} must have the same dtype, got {a.dtype} and {b.dtype}")


def check_dtypes_agree(*named: tuple[str, Any]) -> None:
    """``TypeError`` unless the arrays or tensors of ``(name, x)`` pairs share a dtype.

    Skips ``None`` (an optional argument left out). For a module's weights pass
    ``("the module's parameters", weight)``; the error names every argument and dtype::

        check_dtypes_agree(("q", q), ("k", k), ("v", v))
    """
    given = [(n, x) for n, x in named if x is not None]
    for n, x in given:
        if not hasattr(x, "dtype"):
            raise TypeError(f"{n} must be a tensor or array, got {type(x).__name__}")
    if len({str(x.dtype) for _, x in given}) < 2:
        return
    if len(given) == 2:
        check_same_dtype(*given[0], *given[1])
    names = [n for n, _ in given]
    listed = ", ".join(names[:-1]) + f" and {names[-1]}"
    got = ", ".join(f"{n} {x.dtype}" for n, x in given)
    raise TypeError(f"{listed} must have the same dtype, got {got}")


def first_weight(module: Any) -> Any:
    """A module's first floating parameter, ``None`` when it has none (or is no module):
    its dtype is the one the module's inputs must have (see :func:`check_dtypes_agree`).
    """
    params = getattr(module, "parameters", None)
    if not callable(params):
        return None
    for p in params():
        if p.is_floating_point():
            return p
    return None


def check_finite(x: Any, name: str) -> None:
    """Raise ``ValueError`` when ``x`` holds NaN or infinity (so that none leaks out silently)."""
    if not hasattr(x, "dtype"):
        raise TypeError(f"{name} must be a tensor or array, got {type(x).__name__}")
    ok = bool(torch.isfinite(x).all()) if isinstance(x, torch.Tensor) else bool(np.isfinite(x).all())
    if not ok:
        raise ValueError(f"{name} contains NaN or infinity")


def check_int(value: Any, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """``TypeError`` unless ``value`` is an int (not a bool); ``ValueError`` outside
    ``[minimum, maximum]``."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        bound = "positive" if minimum == 1 else f"at least {minimum}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be at most {maximum}, got {value}")
    return int(value)


def check_tokens(x: Any, name: str, spec: str, vocab_size: int) -> dict[str, int]:
    """``x`` must be an int64 tensor of shape ``spec`` (no size 0) with ids in ``[0, vocab_size)``.

    Returns the sizes bound by ``spec`` (as :func:`check_shape`).
    """
    check_tensor(x, name, floating=False)
    if x.dtype != torch.long:
        raise TypeError(f"{name} must be a LongTensor of token ids, got dtype {x.dtype}")
    dims = check_shape(x, name, spec)
    if x.numel() == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(x.shape)}")
    if bool(((x < 0) | (x >= vocab_size)).any()):
        raise ValueError(f"{name} must hold ids in [0, {vocab_size}), got min {int(x.min())} "
                         f"and max {int(x.max())}")
    return dims


def check_float_dtype(dtype: Any, name: str) -> torch.dtype:
    """Raise ``TypeError`` unless ``dtype`` is a floating ``torch.dtype`` (float64, ...)."""
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise TypeError(f"{name} must be a floating torch.dtype (e.g. torch.float64), "
                        f"got {dtype!r}")
    return dtype


def check_rng(rng: Any) -> np.random.Generator:
    """Raise ``TypeError`` unless ``rng`` is a NumPy ``Generator`` (the data sets' explicit randomness)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), "
                        f"got {type(rng).__name__}")
    return rng
