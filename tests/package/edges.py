"""The edge-case matrix: every public name of seqlearn called at the edges of its domain
(sizes 0 and 1, reduced precision, NaN and infinity, wrong types and shapes).

Each public name has an :class:`Entry` in ``ENTRIES`` (``edge_entries.py``): one valid
call, written with typed argument specifications (:class:`Floats`, :class:`Ids`,
:class:`Mask`, :class:`Flag`, :class:`Int`, ...) over named dimensions (``dims``). From
that call :func:`cases` derives the concrete calls of every column of the matrix
(:data:`KINDS`):

=============  =======================================================================
column         what is changed (one argument at a time unless said otherwise)
=============  =======================================================================
size0, size1   one named dimension set to 0 or 1, in every argument at once
float16,       every floating argument (and the module's parameters) in that dtype
bfloat16
integer        a floating argument given as int64 or bool
inf, nan       one entry of a floating argument set to +inf, -inf or NaN
numpy          a torch tensor given as a NumPy array (a NumPy argument as a tensor)
flag           a bool flag given as "no", 1, 0, None or 1.0
int            an int given as 0, -1, True, 2.5 or "2"
real           a real number given as NaN, +-inf, True or "1"
callable       a callable that returns -1, NaN, inf, None or a string
broadcast      an argument with a singleton dimension added ((B,) -> (B, 1), (1, B))
ids            token ids out of the vocabulary, of another integer type, or floats
mask           a mask or lengths argument of the wrong shape or dtype
object         an object argument (generator, vocabulary, model, batch) of a wrong type
dtypes         one floating argument in float32, the others (and a module's
               parameters) in float64: refused (``mixed=True`` or two floating
               arguments)
complex        a floating argument given as complex128: refused
none           a tensor or array argument given as None: refused, or valid where
               None is documented (an optional mask), never a crash
hugeint        a real number given as 10**400 (beyond float), ids as uint64 holding
               2**63: refused by name or valid, never OverflowError or a wrap
intfloat       an int given as the float of its own value (``2.0`` for ``2``): refused
empty          a string or sequence argument given empty: refused by name or valid
nanlist        a list of numbers with one entry NaN: refused
half16         NumPy floating arrays in float16 at magnitude 300 (squares overflow
               float16): the answer of float64, within float16's precision
=============  =======================================================================

:func:`verdict` says whether an outcome is acceptable: the documented value, or
``ValueError``/``TypeError`` naming the argument. Never another exception, a NaN from
finite inputs, a NaN swallowed into a finite answer where the entry matters, or a
changed argument silently broadcast into a different answer. ``tools/fuzz_edges.py``
runs the same matrix at random sizes, seeds and positions.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

import numpy as np
import torch

KINDS = (
    "size0",
    "size1",
    "float16",
    "bfloat16",
    "integer",
    "inf",
    "nan",
    "numpy",
    "flag",
    "int",
    "real",
    "callable",
    "broadcast",
    "ids",
    "mask",
    "object",
    "dtypes",
    "complex",
    "none",
    "hugeint",
    "intfloat",
    "empty",
    "nanlist",
    "half16",
)
F64 = torch.float64


# ------------------------------------------------------------------ argument specs


@dataclass(frozen=True)
class Floats:
    """A floating tensor of shape ``spec`` (dimension names or ints), standard normal by
    default; ``fill`` maps it into the domain (``"unit"``: (0, 1), ``"positive"``,
    ``"negative"``, or a callable); ``numpy=True``: a float64 NumPy array instead."""

    spec: str
    fill: str | Callable | None = None
    numpy: bool = False
    grad: bool = False


@dataclass(frozen=True)
class Ids:
    """Token ids (int64) of shape ``spec`` in ``[low, vocab)``; ``vocab``: dim or int."""

    spec: str
    vocab: str | int
    low: int = 0


@dataclass(frozen=True)
class Mask:
    """A bool mask of shape ``spec``: True at index 0 of the last axis, random elsewhere
    (``full=True``: all True). ``also``: another documented shape the mask may take,
    broadcast (``"B heads Tq Tk"``): a broadcast case whose shape happens to broadcast
    to it at the drawn sizes is a valid input, not a broadcast, and is not generated."""

    spec: str
    full: bool = False
    also: str = ""


@dataclass(frozen=True)
class Lengths:
    """Integer lengths (int64) of shape ``spec`` in ``[low, high]``, one ``high``."""

    spec: str
    high: str | int
    low: int = 1


@dataclass(frozen=True)
class Flag:
    value: bool = False


@dataclass(frozen=True)
class Int:
    """An int: a literal, or the size of a named dimension (follows the size columns).
    ``bad`` lists the values the ``int`` column tries (default: 0, -1, True, 2.5, "2").
    """

    value: int | str
    bad: tuple = (0, -1, True, 2.5, "2")


@dataclass(frozen=True)
class Real:
    """A real number; ``bad`` lists what the ``real`` column tries."""

    value: float
    bad: tuple = (math.nan, math.inf, -math.inf, True, "1")


@dataclass(frozen=True)
class Choice:
    """One of several choices; the ``object`` column tries each of ``bad``."""

    value: Any
    bad: tuple = ("unknown", None, 1)


@dataclass(frozen=True)
class Fn:
    """A callable; ``bad`` maps a label to a callable the ``callable`` column tries."""

    value: Callable
    bad: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Obj:
    """Any other object, built by ``make(a)`` from the arguments before it (``a``); the
    ``object`` column tries each of ``bad``."""

    make: Callable
    bad: tuple = (None, 0, "x")


Spec = Floats | Ids | Mask | Lengths | Flag | Int | Real | Choice | Fn | Obj


@dataclass(frozen=True)
class Entry:
    """One valid call of a public name and how its edges behave.

    ``call(a)`` runs it with the built arguments ``a`` (attributes named as in
    ``args``; ``a.dtype`` is the floating dtype of the case, for modules:
    ``Module(...).to(a.dtype)``). ``finite_nan``: arguments whose NaN or inf may vanish
    from the answer by documentation (a result that does not depend on their values);
    ``inf_nan``: arguments whose +-inf may give NaN, as torch's own arithmetic does
    (``inf - inf``, ``0 * inf``); ``"*"``: all. ``numeric``: compare float16 and
    bfloat16 results with float64 (tolerance 3e-2 and 6e-2 of the largest output, at
    least 1).
    ``torch_twin``: torch's own computation of the same call (same built arguments, the
    case's dtype); where given, a float16/bfloat16 result may be as far from float64 as
    1.5 times torch's own result is (an ill-conditioned input, LayerNorm of two nearly
    equal features, loses as much in torch).
    ``record=True``: a plain record (NamedTuple, result holder), with no validation.
    ``mixed=True``: the call builds or takes a module in ``a.dtype`` (or a floating
    argument fixes the dtype of another), so one floating argument in another dtype is
    refused even when it is the only one (the ``dtypes`` column).
    ``skip`` maps a column (or one case's label) to the documented reason it does not
    apply; ``aliases`` maps an argument to the name its errors use (``a1`` ->
    ``first[0]``).
    """

    call: Callable[[Any], Any]
    args: dict[str, Spec] = field(default_factory=dict)
    dims: dict[str, int] = field(default_factory=dict)
    finite_nan: tuple[str, ...] = ()
    inf_nan: tuple[str, ...] = ()
    numeric: bool = False
    torch_twin: Callable[[Any], Any] | None = None
    record: bool = False
    mixed: bool = False
    skip: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)


class Args:
    """The built arguments of one call: ``a.q``, ``a.dtype``, ``a.dims``."""

    def __init__(
        self, values: dict[str, Any], dtype: torch.dtype, dims: dict[str, int]
    ):
        self.__dict__.update(values)
        self.dtype, self.dims = dtype, dims


def _size(token: str | int, dims: dict[str, int]) -> int:
    if isinstance(token, int):
        return token
    return int(token) if token.isdigit() else dims[token]


def _shape(spec: str, dims: dict[str, int]) -> tuple[int, ...]:
    return tuple(_size(t, dims) for t in spec.split())


def _gen(name: str, seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 1000 + zlib.crc32(name.encode()) % 1000)


FILLS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "unit": lambda x: torch.sigmoid(x),
    "positive": lambda x: x.abs() + 0.1,
    "negative": lambda x: -x.abs() - 0.1,
}


def build_one(
    name: str,
    spec: Spec,
    dims: dict[str, int],
    seed: int,
    dtype: torch.dtype,
    built: dict[str, Any],
) -> Any:
    g = _gen(name, seed)
    if isinstance(spec, Floats):
        x = torch.randn(_shape(spec.spec, dims), generator=g, dtype=F64)
        if spec.fill is not None:
            x = (FILLS[spec.fill] if isinstance(spec.fill, str) else spec.fill)(x)
        if spec.numpy:
            return x.numpy()
        x = x.to(dtype)
        return x.requires_grad_(True) if spec.grad else x
    if isinstance(spec, Ids):
        high = _size(spec.vocab, dims)
        shape = _shape(spec.spec, dims)
        if high <= spec.low:
            return torch.zeros(shape, dtype=torch.long)
        return torch.randint(spec.low, high, shape, generator=g)
    if isinstance(spec, Mask):
        shape = _shape(spec.spec, dims)
        if spec.full:
            return torch.ones(shape, dtype=torch.bool)
        m = torch.rand(shape, generator=g) < 0.7
        if m.dim() and m.shape[-1]:
            m[..., 0] = True
        return m
    if isinstance(spec, Lengths):
        high = _size(spec.high, dims)
        shape = _shape(spec.spec, dims)
        x = torch.randint(min(spec.low, high), high + 1, shape, generator=g)
        if x.numel():
            x.view(-1)[0] = high
        return x
    if isinstance(spec, Int):
        return _size(spec.value, dims) if isinstance(spec.value, str) else spec.value
    if isinstance(spec, (Flag, Real, Choice, Fn)):
        return spec.value
    if isinstance(spec, Obj):
        return spec.make(Args(built, dtype, dims))
    raise TypeError(spec)


def build(
    entry: Entry,
    dims: dict[str, int],
    seed: int,
    dtype: torch.dtype = F64,
    override: dict[str, Any] | None = None,
) -> Args:
    values: dict[str, Any] = {}
    for name, spec in entry.args.items():
        if override and name in override:
            values[name] = override[name](
                build_one(name, spec, dims, seed, dtype, values)
            )
        else:
            values[name] = build_one(name, spec, dims, seed, dtype, values)
    return Args(values, dtype, dims)


# --------------------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    """One concrete call of the matrix: ``kind`` (the column), what changed (``label``),
    the argument it changed (``arg``, for the error message) and how to build it."""

    kind: str
    label: str
    arg: str | None
    dims: dict[str, int]
    dtype: torch.dtype = F64
    override: dict[str, Callable] = field(default_factory=dict)
    expect: str = "named-or-valid"  # see judge()
    probe: dict[str, Callable] = field(
        default_factory=dict
    )  # the entry set to 7 instead
    reference: dict[str, Callable] | None = None  # the float64 call to compare with


def _documented(spec: Any, new_axis: str, dims: dict[str, int]) -> bool:
    """Whether ``spec``'s shape with a ``"leading"`` or ``"trailing"`` axis of 1
    broadcasts to the other documented shape ``spec.also``."""
    also = getattr(spec, "also", "")
    if not also:
        return False
    shape = list(_shape(spec.spec, dims))
    shape = [1] + shape if new_axis == "leading" else shape + [1]
    target = _shape(also, dims)
    return len(shape) == len(target) and all(
        n in (1, m) for n, m in zip(shape, target))


def _set(index: tuple, value: float) -> Callable:
    """Set the first entry (in memory order) of an array to ``value``."""

    def put(x: Any) -> Any:
        x = x.copy() if isinstance(x, np.ndarray) else x.detach().clone()
        if x.size == 0 if isinstance(x, np.ndarray) else x.numel() == 0:
            return x
        x.reshape(-1)[0] = value  # index 0 of the flattened tensor
        return x

    return put


def _to_numpy(x: Any) -> Any:
    return x.detach().numpy() if isinstance(x, torch.Tensor) else x


def _to_torch(x: Any) -> Any:
    return torch.from_numpy(np.ascontiguousarray(x)) if isinstance(x, np.ndarray) else x


def _constant(value: Any) -> Callable:
    return lambda _: value


def _uint64_huge(x: Any) -> Any:
    """Ids as uint64 with the first one 2**63 (int64 would read it as negative)."""
    a = x.detach().numpy().astype(np.uint64)
    if a.size:
        a.reshape(-1)[0] = 2**63
    return torch.from_numpy(a)


def _empty(x: Any) -> Any:
    return type(x)()


def _nan_first(x: Any) -> Any:
    return type(x)([math.nan, *list(x)[1:]])


def _huge_first_id(x: Any) -> Any:
    """A list of id lists (or ids) with its first id set to 2**63."""
    x = [list(s) if isinstance(s, (list, tuple)) else s for s in x]
    if isinstance(x[0], list):
        x[0][0] = 2**63
    else:
        x[0] = 2**63
    return x


def _is_ints(x: Any) -> bool:
    return all(isinstance(i, int) and not isinstance(i, bool) for i in x)


_VALUES: dict[tuple, dict[str, Any]] = {}


def _obj_values(entry: Entry, dims: dict[str, int]) -> dict[str, Any]:
    """The built values of ``entry``'s plain-object arguments (strings, lists), to see
    which classes apply; models and other objects are not kept."""
    key = (id(entry), tuple(sorted(dims.items())))
    if key not in _VALUES:
        if not any(isinstance(s, Obj) for s in entry.args.values()):
            _VALUES[key] = {}
        else:
            try:
                a = build(entry, dims, 0)
                _VALUES[key] = {n: getattr(a, n) for n, s in entry.args.items()
                                if isinstance(s, Obj)
                                and isinstance(getattr(a, n), (str, list, tuple))}
            except Exception:  # noqa: BLE001 - an argument that cannot exist here
                _VALUES[key] = {}
    return _VALUES[key]


def _classes(entry: Entry, dims: dict[str, int]) -> Iterator[Case]:
    """The columns of the third pass (issue 31): mixed dtypes, complex, None, huge
    numbers, integral floats, empty and NaN-holding sequences, float16 reductions."""
    floats = [n for n, s in entry.args.items() if isinstance(s, Floats) and not s.numpy]
    arrays = [n for n, s in entry.args.items() if isinstance(s, Floats) and s.numpy]
    if len(floats) >= 2 or (floats and entry.mixed):
        for name in floats:
            yield Case("dtypes", f"{name} as float32", name, dims,
                       override={name: lambda x: x.detach().float()}, expect="refused")
    if len(arrays) >= 2:
        for name in arrays:
            yield Case("dtypes", f"{name} as float32", name, dims,
                       override={name: lambda x: x.astype(np.float32)},
                       expect="refused")
    for name, spec in entry.args.items():
        if isinstance(spec, Floats):
            cast = ((lambda x: x.astype(np.complex128)) if spec.numpy
                    else (lambda x: x.detach().to(torch.complex128)))
            yield Case("complex", f"{name} as complex128", name, dims,
                       override={name: cast}, expect="refused")
        if isinstance(spec, (Floats, Ids, Mask, Lengths)):
            yield Case("none", f"{name}=None", name, dims,
                       override={name: _constant(None)})
        if isinstance(spec, Real):
            yield Case("hugeint", f"{name}=10**400", name, dims,
                       override={name: _constant(10**400)})
        if isinstance(spec, Ids):
            yield Case("hugeint", f"{name} as uint64 holding 2**63", name, dims,
                       override={name: _uint64_huge}, expect="refused")
        if isinstance(spec, Int) or (isinstance(spec, Choice)
                                     and _is_ints([spec.value])):
            yield Case("intfloat", f"{name} as float", name, dims,
                       override={name: float}, expect="refused")
    for name, value in _obj_values(entry, dims).items():
        if len(value):
            yield Case("empty", f"{name} empty", name, dims, override={name: _empty})
        if (not isinstance(value, str) and len(value)
                and all(isinstance(i, (int, float)) for i in value)
                and not _is_ints(value)):
            yield Case("nanlist", f"{name}[0] = nan", name, dims,
                       override={name: _nan_first}, expect="refused")
        if (not isinstance(value, str) and len(value)
                and (_is_ints(value) or all(isinstance(s, (list, tuple)) and len(s)
                                            and _is_ints(s) for s in value))):
            yield Case("hugeint", f"{name}[0] = 2**63", name, dims,
                       override={name: _huge_first_id}, expect="refused")
    if arrays and not floats:
        big = {n: (lambda x: x * 300.0) for n in arrays}
        yield Case("half16", "float16 x 300", None, dims,
                   override={n: (lambda x: (x * 300.0).astype(np.float16))
                             for n in arrays},
                   expect="half", reference=big)


def cases(entry: Entry, dims: dict[str, int] | None = None) -> Iterator[Case]:
    """Every concrete call of ``entry``'s row of the matrix, column by column."""
    dims = dict(entry.dims if dims is None else dims)
    if entry.record:
        return
    yield from _classes(entry, dims)
    for dim in entry.dims:
        for size in (0, 1):
            yield Case(f"size{size}", f"{dim}={size}", None, {**dims, dim: size})
    floats = [n for n, s in entry.args.items() if isinstance(s, Floats) and not s.numpy]
    arrays = sum(
        isinstance(s, (Floats, Ids, Mask, Lengths)) for s in entry.args.values()
    )
    if floats:
        yield Case("float16", "float16", None, dims, torch.float16, expect="half")
        yield Case("bfloat16", "bfloat16", None, dims, torch.bfloat16, expect="half")
    for name, spec in entry.args.items():
        if isinstance(spec, Floats):
            for dt in (
                (np.int64, np.bool_) if spec.numpy else (torch.long, torch.bool)
            ):
                cast = (
                    (lambda t: lambda x: x.astype(t))
                    if spec.numpy
                    else (lambda t: lambda x: x.detach().to(t))
                )(dt)
                yield Case(
                    "integer",
                    f"{name} as {dt}",
                    name,
                    dims,
                    override={name: cast},
                    expect="refused",
                )
            for value in (math.inf, -math.inf, math.nan):
                kind = "nan" if math.isnan(value) else "inf"
                yield Case(
                    kind,
                    f"{name}[0] = {value}",
                    name,
                    dims,
                    override={name: _set((), value)},
                    expect=kind,
                    probe={name: _set((), 7.0)},
                )
            yield Case(
                "numpy",
                f"{name} as {'tensor' if spec.numpy else 'numpy'}",
                name,
                dims,
                override={name: _to_torch if spec.numpy else _to_numpy},
                expect="refused-or-same",
            )
        if isinstance(spec, (Ids, Mask, Lengths)):
            yield Case(
                "numpy",
                f"{name} as numpy",
                name,
                dims,
                override={name: _to_numpy},
                expect="refused-or-same",
            )
        if isinstance(spec, (Floats, Ids, Mask, Lengths)) and not getattr(
            spec, "numpy", False
        ):
            if (
                arrays > 1 and not _documented(spec, "trailing", dims)
            ):  # alone, a trailing 1 is another valid input, not a broadcast
                yield Case(
                    "broadcast",
                    f"{name}[..., None]",
                    name,
                    dims,
                    override={name: lambda x: x[..., None]},
                    expect="refused-or-same",
                )
            if not _documented(spec, "leading", dims):
                yield Case(
                    "broadcast",
                    f"{name}[None]",
                    name,
                    dims,
                    override={name: lambda x: x[None]},
                    expect="refused-or-same",
                )
        if isinstance(spec, Ids):
            high = _size(spec.vocab, dims)
            for label, fn in (
                (f"{name}[0] = vocab", _set((), high)),
                (f"{name}[0] = -1", _set((), -1)),
            ):
                yield Case(
                    "ids", label, name, dims, override={name: fn}, expect="refused"
                )
            for dt in (torch.int32, torch.uint8, torch.uint64, torch.float64,
                       torch.bool):
                yield Case(
                    "ids",
                    f"{name} as {dt}",
                    name,
                    dims,  # integers: refused or alike
                    override={name: (lambda t: lambda x: x.to(t))(dt)},
                    expect=(
                        "refused"
                        if dt in (torch.float64, torch.bool)
                        else "refused-or-same"
                    ),
                )
        if isinstance(spec, (Mask, Lengths)):
            bad_dtypes = (
                (torch.float64, torch.uint8, torch.long)
                if isinstance(spec, Mask)
                else (torch.float64, torch.bool)
            )
            for dt in bad_dtypes:
                yield Case(
                    "mask",
                    f"{name} as {dt}",
                    name,
                    dims,
                    override={name: (lambda t: lambda x: x.to(t))(dt)},
                    expect="refused",
                )
            if isinstance(spec, Mask):
                shape = _shape(spec.spec, dims)
                if (
                    shape and shape[-1] != 2
                ):  # a cut to size 1 would broadcast, as documented
                    yield Case(
                        "mask",
                        f"{name}[..., :-1]",
                        name,
                        dims,
                        override={name: lambda x: x[..., :-1]},
                        expect="refused-or-same",
                    )
                if len(shape) > 1 and shape[0] != shape[-1]:  # else the same shape
                    yield Case(
                        "mask",
                        f"{name}.transpose",
                        name,
                        dims,
                        override={name: lambda x: x.transpose(0, -1)},
                        expect="refused-or-same",
                    )
            else:
                high = _size(spec.high, dims)
                for value in (high + 1, -1):
                    yield Case(
                        "mask",
                        f"{name}[0] = {value}",
                        name,
                        dims,
                        override={name: _set((), value)},
                        expect="refused",
                    )
        if isinstance(spec, Flag):
            for bad in ("no", 1, 0, None, 1.0):
                yield Case(
                    "flag",
                    f"{name}={bad!r}",
                    name,
                    dims,
                    override={name: _constant(bad)},
                    expect="refused",
                )
        if isinstance(spec, Int):
            for bad in spec.bad:
                numeric_ok = isinstance(bad, int) and not isinstance(bad, bool)
                yield Case(
                    "int",
                    f"{name}={bad!r}",
                    name,
                    dims,
                    override={name: _constant(bad)},
                    expect="named-or-valid" if numeric_ok else "refused",
                )
        if isinstance(spec, Real):
            for bad in spec.bad:
                finite = isinstance(bad, float) and math.isfinite(bad)
                yield Case(
                    "real",
                    f"{name}={bad!r}",
                    name,
                    dims,
                    override={name: _constant(bad)},
                    expect=(
                        "named-or-valid"
                        if finite or bad in (math.inf, -math.inf)
                        else "refused"
                    ),
                )
        if isinstance(spec, Fn):
            for label, bad in spec.bad.items():
                yield Case(
                    "callable",
                    f"{name} {label}",
                    name,
                    dims,
                    override={name: _constant(bad)},
                    expect="refused",
                )
        if isinstance(spec, (Choice, Obj)):
            for bad in spec.bad:
                yield Case(
                    "object",
                    f"{name}={bad!r}",
                    name,
                    dims,
                    override={name: _constant(bad)},
                    expect="refused",
                )


def columns(entry: Entry) -> dict[str, int]:
    """How many concrete calls each column of the matrix has for ``entry`` (0: n/a)."""
    count = dict.fromkeys(KINDS, 0)
    for case in cases(entry):
        count[case.kind] += 1
    return count


# --------------------------------------------------------------------------- outcomes


def leaves(x: Any) -> list[Any]:
    """The numbers in a result: tensors, arrays and Python numbers, depth first."""
    if isinstance(x, torch.Tensor):
        return [x.detach()]
    if isinstance(x, np.ndarray):
        return [
            (
                torch.from_numpy(np.asarray(x, dtype=np.float64))
                if x.dtype.kind in "fc"
                else (
                    torch.from_numpy(x.astype(np.int64)) if x.dtype.kind in "iub" else x
                )
            )
        ]
    if isinstance(x, (bool, np.bool_)):
        return [torch.tensor(bool(x))]
    if isinstance(x, (int, float, np.integer, np.floating)):
        return [torch.tensor(float(x), dtype=F64)]
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in leaves(v)]
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in leaves(v)]
    if isinstance(x, torch.nn.Module):
        return [p.detach() for p in x.parameters()]
    return []


def _has_nan(values: list[Any]) -> bool:
    return any(
        isinstance(v, torch.Tensor) and v.is_floating_point() and bool(v.isnan().any())
        for v in values
    )


def _all_finite(values: list[Any]) -> bool:
    return all(
        not (isinstance(v, torch.Tensor) and v.is_floating_point())
        or bool(v.isfinite().all())
        for v in values
    )


def same(x: list[Any], y: list[Any], rtol: float = 1e-6) -> bool:
    """Equal results; a singleton dimension more or less counts as the same result (an
    argument given as ``x[None]`` may batch the answer, but must not change it)."""
    if len(x) != len(y):
        return False
    for u, v in zip(x, y):
        if not isinstance(u, torch.Tensor) or not isinstance(v, torch.Tensor):
            if u is not v and u != v:
                return False
            continue
        if u.shape != v.shape:
            if u.numel() != v.numel() or u.squeeze().shape != v.squeeze().shape:
                return False
            u, v = u.squeeze(), v.squeeze()
        if not torch.allclose(
            u.double(), v.double(), rtol=rtol, atol=1e-9, equal_nan=True
        ):
            return False
    return True


@dataclass
class Outcome:
    """What one call did: ``result`` (its leaves) or ``error``; ``unbuilt``: an argument
    could not be made for this case (a model of vocabulary size 0), so there is no call.
    """

    result: list[Any] | None = None
    error: BaseException | None = None
    unbuilt: bool = False


def run(
    entry: Entry, case: Case | None, seed: int = 0, dims: dict[str, int] | None = None
) -> Outcome:
    dims = dict(entry.dims if dims is None else dims) if case is None else case.dims
    dtype = F64 if case is None else case.dtype
    torch.manual_seed(seed)
    try:
        a = build(entry, dims, seed, dtype, None if case is None else case.override)
    except Exception as error:  # noqa: BLE001 - an argument that cannot exist
        return Outcome(error=error, unbuilt=True)
    torch.manual_seed(seed)
    try:
        return Outcome(result=leaves(entry.call(a)))
    except Exception as error:  # noqa: BLE001 - the outcome is judged below
        return Outcome(error=error)


def verdict(entry: Entry, case: Case, seed: int, base: Outcome) -> str | None:
    """Run ``case`` and judge it (:func:`judge`); a NaN that vanished from the answer is
    wrong only where the entry matters: the same entry set to 7 must change the answer.
    """
    outcome = run(entry, case, seed)
    if case.reference is not None:  # compare with the same inputs in float64
        base = run(entry, replace(case, override=case.reference), seed)
    twin = None
    if case.expect == "half" and entry.numeric and entry.torch_twin is not None:
        twin = run(replace(entry, call=entry.torch_twin), case, seed)
    found = judge(entry, case, outcome, base, twin)
    if found and found.startswith("NaN input swallowed") and case.probe:
        probe = run(entry, replace(case, override=case.probe), seed)
        if (
            probe.error is None
            and base.error is None
            and same(probe.result, base.result)
        ):
            return None  # the entry does not reach the answer (masked, unused)
    return found


def judge(
    entry: Entry, case: Case, outcome: Outcome, base: Outcome | None,
    twin: Outcome | None = None,
) -> str | None:
    """``None`` when the outcome is acceptable, else what is wrong (one line);
    ``twin``: torch's own result of a reduced-precision case (``Entry.torch_twin``)."""
    if outcome.unbuilt or case.kind in entry.skip or case.label in entry.skip:
        return None
    error = outcome.error
    if error is not None:
        if not isinstance(error, (ValueError, TypeError)):
            return f"crash: {type(error).__name__}: {str(error)[:160]}"
        message = str(error)
        names = (
            [case.arg.rstrip("_"), entry.aliases.get(case.arg, "")]
            if case.arg
            else [n.rstrip("_") for n in entry.args]
        )
        names += [] if case.arg else list(entry.dims)
        if not any(n in message for n in names if n):
            named = " or ".join(filter(None, names))
            return f"{type(error).__name__} does not name {named}: {message[:160]}"
        return None
    result = outcome.result or []
    if case.expect == "refused":
        return "accepted (should raise ValueError/TypeError naming the argument)"
    if case.expect == "refused-or-same":
        if (
            base is None
            or base.error is not None
            or not same(result, base.result or [])
        ):
            return "accepted with a different answer (should raise or answer the same)"
        return None
    if case.expect == "nan":
        if case.arg in entry.finite_nan or "*" in entry.finite_nan:
            return None
        if not _has_nan(result):
            return "NaN input swallowed: the answer is finite"
        return None
    if case.expect == "inf":
        allowed = entry.inf_nan + entry.finite_nan
        if _has_nan(result) and case.arg not in allowed and "*" not in allowed:
            return "infinite input gives NaN"
        return None
    if case.expect == "half":
        if base is None or base.error is not None:
            return None
        ref = base.result or []
        if not _all_finite(ref):
            return None
        if not _all_finite(result):
            return f"{case.dtype} gives NaN or inf where float64 is finite"
        if entry.numeric:
            tol = 3e-2 if case.dtype == torch.float16 else 6e-2
            own = twin.result if twin is not None and twin.error is None else None
            for k, (u, v) in enumerate(zip(result, ref)):
                if isinstance(u, torch.Tensor) and u.is_floating_point() and u.numel():
                    scale = max(float(v.abs().max()), 1.0)  # inputs are O(1)
                    err = float((u.double() - v.double()).abs().max())
                    allowed = tol * scale
                    if own is not None:  # torch loses this much in the same dtype
                        lost = float((own[k].double() - v.double()).abs().max())
                        allowed = max(allowed, 1.5 * lost)
                    if err > allowed:
                        return f"{case.dtype} error {err:.2e} > {allowed:.2e}"
        return None
    # named-or-valid: sizes 0 and 1, in-range ints and reals
    if _has_nan(result):
        return "returns NaN"
    return None
