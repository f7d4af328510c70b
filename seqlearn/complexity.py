r"""Measuring the columns of Vaswani et al.'s Table 1 instead of quoting them.

Vaswani et al. (2017, Table 1) compare layer types by three numbers as functions of the
sequence length ``n``: the cost of one layer, the number of *sequential* operations (steps that
must wait for each other), and the *maximum path length* between an input position and an
output position in a network of such layers. Here each is measured from the layer itself:

- :func:`jacobian_pattern`: which output positions depend *directly* on which input positions,
  read off the non-zero blocks of the Jacobian ``dy_t / dx_s`` (autograd, random input);
- :func:`max_path_length`: stack layers until every output position depends on every input
  position it can depend on; the path length from ``x_s`` to ``y_t`` is the least number of
  direct dependencies (Jacobian blocks) chained between them, and the function returns the
  largest over all pairs. ``within`` adds dependencies between a layer's own outputs (a
  recurrent layer's ``h_t`` on ``h_{t-1}``), which lengthen paths inside one layer;
- :func:`sequential_steps`: the longest chain of a layer's outputs that wait for each other
  (``n`` for a recurrence, 1 when all outputs can be computed at once), from a given pattern;
- :func:`graph_depth`: the same column read off the running code: the longest chain of
  operations that autograd records between a layer's input and its output;
- :func:`op_input_elements`: how many elements each ATen operation of a call reads (the
  softmax of attention reads every one of the ``n^2`` scores);
- :func:`loglog_slope`: the exponent ``p`` of a cost ``c n^p``, fitted by least squares on
  logarithms;
- :func:`saved_tensor_bytes`: the memory autograd keeps for the backward pass of one call;
- :func:`fastest_times`: wall-clock times of several functions on several inputs, measured
  round-robin so that load from other processes disturbs them alike.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from torch.utils._python_dispatch import TorchDispatchMode

from seqlearn.validate import check_bool, check_int, check_shape, check_tensor


def jacobian_pattern(fn: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    r"""Boolean ``(T_out, T_in)``: True where ``dy_t / dx_s`` (a ``(D_out, D_in)`` block) is non-zero.

    ``fn`` maps ``x`` (T_in, D_in) to ``y`` (T_out, D_out). One backward pass per output
    position ``t`` gives ``r_t^T dy_t/dx_s`` for every ``s`` at once, with a random direction
    ``r_t`` (a fixed seed): it is exactly zero when the block is (``y_t`` does not read
    ``x_s``), and non-zero otherwise except on a set of directions of probability zero.
    A ``y`` that does not depend on ``x`` at all gives the all-False pattern.
    """
    check_tensor(x, "x")
    check_shape(x, "x", "T D")
    x = x.detach().requires_grad_(True)
    y = fn(x)
    check_tensor(y, "fn(x)")
    check_shape(y, "fn(x)", "T D")
    if not y.requires_grad:  # y does not depend on x (a constant, or x detached)
        return torch.zeros(y.shape[0], x.shape[0], dtype=torch.bool)
    r = torch.randn(y.shape, generator=torch.Generator().manual_seed(0), dtype=y.dtype)
    rows = []
    for t in range(y.shape[0]):
        (g,) = torch.autograd.grad(y[t], x, r[t], retain_graph=True, allow_unused=True)
        rows.append(torch.zeros(x.shape[0], dtype=torch.bool) if g is None
                    else (g != 0).any(dim=1))  # (T_in,)
    return torch.stack(rows) if rows else torch.zeros(0, x.shape[0], dtype=torch.bool)


def _check_pattern(p: Tensor, name: str, T: int | None = None) -> int:
    """A ``(T, T)`` bool dependency pattern over ``T >= 1`` positions; returns ``T``."""
    if not isinstance(p, Tensor) or p.dtype != torch.bool:
        raise TypeError(f"{name} must be a bool tensor, got "
                        f"{getattr(p, 'dtype', type(p).__name__)}")
    T = check_shape(p, name, "T T", sizes=None if T is None else {"T": T})["T"]
    if T == 0:
        raise ValueError(f"{name} must relate T >= 1 positions, got shape (0, 0)")
    return T


def _through(pattern: Tensor, dist: Tensor) -> Tensor:
    """One more hop: ``out[t, s] = 1 + min over u with pattern[t, u] of dist[u, s]``."""
    inf = torch.full_like(dist, math.inf)
    hops = torch.where(pattern[:, :, None], dist[None, :, :], inf[None])  # (T, T, T): t, u, s
    return 1 + hops.amin(dim=1)  # (T, T)


def max_path_length(layers: Sequence[Tensor], *, within: Tensor | None = None,
                    causal: bool = False, max_layers: int = 4096) -> tuple[int, int]:
    r"""Layers needed to connect every pair of positions, and the longest path then.

    ``layers``: the ``(T, T)`` bool patterns (:func:`jacobian_pattern`) of the layers of a
    stack, bottom first, repeated cyclically when the stack needs more (a dilated stack passes
    dilations 1, k, k^2, ...). ``within``: a ``(T, T)`` bool pattern of direct dependencies of
    each layer's outputs on its own outputs (``within[t, u]``: ``y_t`` reads ``y_u``), or None.
    ``causal``: the pairs to connect are ``s <= t`` instead of all pairs.

    A path from input ``s`` to output ``t`` chains direct dependencies; its length is their
    number. Layers are stacked until every pair to connect has a path; returns
    ``(layers, max_{s,t} shortest path length)``. O(T^3) memory: for ``T`` up to a few hundred.
    """
    if not isinstance(layers, Sequence) or isinstance(layers, Tensor) or not layers:
        raise TypeError("layers must be a non-empty sequence of (T, T) bool tensors")
    T = _check_pattern(layers[0], "layers[0]")
    for i, p in enumerate(layers):
        _check_pattern(p, f"layers[{i}]", T)
    if within is not None:
        _check_pattern(within, "within", T)
    check_bool(causal, "causal")
    check_int(max_layers, "max_layers")
    target = torch.ones(T, T, dtype=torch.bool)
    if causal:
        target = target.tril()  # (t, s) with s <= t
    dist = torch.full((T, T), math.inf, dtype=torch.float64).fill_diagonal_(0.0)  # inputs
    for depth in range(1, max_layers + 1):
        dist = _through(layers[(depth - 1) % len(layers)], dist)  # enter the next layer
        if within is not None:
            for _ in range(T):  # relax along the outputs' own chain (at most T - 1 hops)
                longer = torch.minimum(dist, _through(within, dist))
                if torch.equal(longer, dist):
                    break
                dist = longer
        if bool(torch.isfinite(dist[target]).all()):
            return depth, int(dist[target].max())
    raise ValueError(f"{max_layers} layers of these patterns do not connect every pair of "
                     f"positions{' s <= t' if causal else ''}")


def sequential_steps(within: Tensor | None, T: int | None = None) -> int:
    """Length of the longest chain of outputs that wait for each other (1 if none waits).

    ``within[t, u]`` True when output ``t`` reads output ``u`` of the same layer (a DAG);
    ``None`` means no output reads another, and then ``T`` is not needed.
    """
    if within is None:
        return 1
    T = _check_pattern(within, "within", T)
    level = torch.ones(T, dtype=torch.long)  # steps until output t is known
    for _ in range(T + 1):
        waits = torch.where(within, level[None, :], torch.zeros_like(within, dtype=torch.long))
        new = 1 + waits.amax(dim=1)  # one step after the last output it reads
        if torch.equal(new, level):
            return int(level.max())
        level = new
    raise ValueError("within has a cycle: the outputs wait for each other forever")


def graph_depth(fn: Callable[[Tensor], Tensor], x: Tensor) -> int:
    """Operations on the longest chain from ``x`` to ``fn(x)`` in the graph autograd records.

    Runs ``fn`` on a copy of ``x`` that requires grad and walks the recorded graph (each
    node's ``next_functions``) from the output back to ``x``. Every recorded operation counts
    as one step, so the result is the number of operations that must run one after another
    however many run in parallel: constant in the length for a layer that treats all
    positions at once, growing with it for a recurrence. Paths that end at other leaves
    (parameters, constants) are not chains from ``x`` and do not count.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    check_tensor(x, "x")
    x = x.detach().requires_grad_(True)
    with torch.enable_grad():
        y = fn(x)
    check_tensor(y, "fn(x)")
    if y.grad_fn is None:
        raise ValueError("fn(x) does not depend on x: autograd recorded no operation")
    depth: dict[object, float] = {}  # node -> operations on its longest chain down to x
    stack = [(y.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if node in depth:
            continue
        children = [c for c, _ in node.next_functions if c is not None]
        if getattr(node, "variable", None) is x:  # x's AccumulateGrad: the chain's start
            depth[node] = 0.0
        elif not children:  # another leaf: no chain from x ends here
            depth[node] = -math.inf
        elif expanded:
            depth[node] = 1 + max(depth[c] for c in children)
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in children if c not in depth)
    longest = depth[y.grad_fn]
    if longest == -math.inf:
        raise ValueError("fn(x) does not depend on x: no recorded chain reaches x")
    return int(longest)


class _ElementCounter(TorchDispatchMode):
    """Adds up, per ATen operation, the elements of the first tensor each call reads."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        first = next((a for a in args if isinstance(a, Tensor)), None)
        if first is not None:
            name = func.overloadpacket.__name__
            self.counts[name] = self.counts.get(name, 0) + first.numel()
        return func(*args, **(kwargs or {}))


def op_input_elements(fn: Callable[..., object], *args: object) -> dict[str, int]:
    """Elements of the first tensor argument of every ATen operation ``fn(*args)`` runs.

    Keyed by the operation's name (``"_softmax"``, ``"bmm"``, ...), summed over its calls.
    For an elementwise operation it is the work done, counted from the running code: the
    softmax of ``attention`` on ``n`` queries and ``n`` keys reads (and exponentiates) all
    ``n^2`` scores, where ``FlopCounterMode`` counts floating-point operations of matrix
    products only.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    with _ElementCounter() as counter:
        fn(*args)
    return counter.counts


def _as_reals(values: object, name: str) -> Tensor:
    """``values`` as a float64 tensor; ``TypeError`` naming ``name`` when they are not
    numbers."""
    try:
        return torch.as_tensor(values, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError) as error:
        raise TypeError(f"{name} must be a sequence of numbers, got "
                        f"{values!r}") from error


def loglog_slope(n: Sequence[float], cost: Sequence[float]) -> float:
    r"""Exponent ``p`` of ``cost = c n^p``: least-squares slope of ``log cost`` against
    ``log n``."""
    x, y = (_as_reals(v, name) for v, name in ((n, "n"), (cost, "cost")))
    if x.dim() != 1 or x.shape != y.shape or len(x) < 2:
        raise ValueError("n and cost must be two sequences of one length >= 2, got "
                         f"shapes {tuple(x.shape)} and {tuple(y.shape)}")
    if not bool(((x > 0) & (y > 0) & x.isfinite() & y.isfinite()).all()):
        raise ValueError("n and cost must be positive and finite")
    if len(set(x.tolist())) < 2:
        raise ValueError("n must hold at least two different values")
    lx, ly = x.log(), y.log()
    lx, ly = lx - lx.mean(), ly - ly.mean()
    return float((lx * ly).sum() / (lx * lx).sum())


def saved_tensor_bytes(fn: Callable[..., object], *args: object) -> int:
    """Bytes of the distinct storages autograd saves for backward while ``fn(*args)`` runs.

    Counts every storage once (a saved input is counted too): the memory a training step
    holds between its forward and its backward pass because of this call.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    storages: dict[int, int] = {}

    def pack(t: Tensor) -> Tensor:
        storage = t.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*args)
    return sum(storages.values())


def fastest_times(fns: dict[str, Callable[[object], object]], inputs: Sequence[object],
                  repeats: int = 3) -> dict[tuple[str, int], float]:
    """Fastest of ``repeats`` calls of ``fns[name](inputs[i])``, keyed by ``(name, i)``
    (seconds).

    One warm-up round first; then every function runs on every input once per round, so
    that a burst of load from other processes on a shared machine falls on all
    measurements of a round instead of on all repeats of one of them. The minimum is the
    least disturbed call.
    """
    if not isinstance(fns, dict) or not all(callable(f) for f in fns.values()):
        raise TypeError("fns must be a dict of callables")
    if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
        raise TypeError(f"inputs must be a sequence of inputs, got "
                        f"{type(inputs).__name__}")
    check_int(repeats, "repeats")
    times: dict[tuple[str, int], list[float]] = {(name, i): [] for name in fns
                                                 for i in range(len(inputs))}
    for round_ in range(repeats + 1):
        for name, fn in fns.items():
            for i, x in enumerate(inputs):
                start = time.perf_counter()
                fn(x)
                if round_:
                    times[name, i].append(time.perf_counter() - start)
    return {key: min(value) for key, value in times.items()}
