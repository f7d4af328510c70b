"""Do several scanning layers need fewer parameters than one wide window? Exact counts.

Command (from the repository root; 11-13 s of CPU time on one core, 11 s to a minute of
wall time depending on the load of the shared 2-core machine)::

    .venv/bin/python bench/study_stacked_scanning.py            # seeds 0-4

The CMU 11-785 notes say of scanning a sequence with a small network that splitting it into
several layers "can use fewer parameters". For pairs of 1-D convolutional stacks with the same
receptive field ``R`` (valid convolutions, tanh between layers, biases included) this script
prints

* ``params``: ``sum(p.numel())`` of the stacks, checked against the closed forms below;
* ``support``: whether ``dy_t / dx_s`` (autograd, float64, random weights) is non-zero for
  exactly the same ``(t, s)`` in both stacks, namely ``t <= s < t + R``, for every seed;
* ``linear dim``: with the tanh removed and no biases, the dimension of the set of linear
  maps the stack can represent, i.e. the rank of the Jacobian of ``parameters -> effective
  kernel (C_out, C_in, R)`` at random parameters (the same for every seed). A wide window
  represents every kernel, ``C_out C_in R``.

Closed forms, one layer ``C_in -> C_out`` of width ``k`` holding ``k C_in C_out + C_out``:

* equal widths ``C``, stride 1: ``L`` layers of width ``k`` see ``R = L(k-1) + 1`` samples with
  ``L k C^2 + L C`` parameters, one window of ``R`` with ``R C^2 + C``: the stack has
  ``(L-1)(C^2 + C)`` *more*. In two dimensions the count reverses (two 3x3 layers,
  ``18 C^2 + 2C``, against one 5x5, ``25 C^2 + C``): the familiar argument is a 2-D one.
* the scanning MLP ``D -> H -> O`` (a window of ``R`` inputs, a hidden layer, a 1x1 output)
  against its distributed form (hidden layer on ``k1`` inputs, output layer on ``k2`` hidden
  vectors, ``k1 + k2 - 1 = R``): the distributed form has ``(k2 - 1) H (D - O)`` fewer
  parameters, fewer exactly when the layers narrow (``D > O``).
* with the second layer dilated by ``k1`` (the distributed scan's blocks side by side), the
  field multiplies, ``R = k1 k2``, and the pair holds ``(k1 + k2) C^2 + 2C`` against
  ``k1 k2 C^2 + C``: fewer as soon as ``k1 + k2 < k1 k2``. The price: its linear maps form a
  set of lower dimension than the kernels of a wide window (448 of 1024 for k1 = k2 = 4).

Output of the command above (torch 2.13 CPU, one thread)::

    C = 8 channels unless stated; R = receptive field; support over seeds 0-4
    case                                        R  params  support  linear dim / kernels
    one window, k = 5                           5     328        -         320 / 320
    two layers, k = 3                           5     400     same         320 / 320
    one window, k = 9                           9     584        -         576 / 576
    four layers, k = 3                          9     800     same         576 / 576
    one window, k = 16                         16    1032        -        1024 / 1024
    k = 4, then k = 4 dilated 4                16     528     same         448 / 1024
    one window, k = 8                           8     520        -         512 / 512
    k = 2, dilations 1, 2, 4                    8     408     same         256 / 512
    MLP 8 -> 16 -> 2, window 16                16    2098        -         256 / 256
    distributed, k1 = 4, k2 = 13               16     946     same         256 / 256
    distributed, k1 = 4, k2 = 4 dilated 4      16     658     same         256 / 256
    MLP 2 -> 16 -> 8, window 16                16     664        -         256 / 256
    distributed, k1 = 4, k2 = 13               16    1816     same         256 / 256
    2-D, C = 8: one 5x5 layer 1608, two 3x3 layers 1168
    all closed forms and supports held for seeds [0, 1, 2, 3, 4]

Re-run natively on 2026-11-29 (output in bench/results/study_stacked_scanning.native.txt;
19 s of CPU) and under the perturbed numerics (`make study-perturbed
STUDY=bench/study_stacked_scanning.py`; output in
bench/results/study_stacked_scanning.perturbed.txt; 24 s of CPU): the same table, digit for
digit. Nothing here is trained: the counts are exact, and the supports and ranks are decided
far above rounding noise.

Conclusion: the claim holds only with qualifications. At stride 1 and equal widths a stack
always has more parameters than one window of the same field (400 against 328, 800 against
584); it has fewer when the layers narrow (946 against 2098 for 8 -> 16 -> 2, but 1816
against 664 when they widen, 2 -> 16 -> 8) or when the upper layer is dilated, so that the
field multiplies (528 against 1032). The support of the Jacobian is the same window in every
case: no stack sees less than the wide window. What the dilated stacks give up is
expressiveness: their linear maps form a set of dimension 448 (256) out of the 1024 (512)
kernels of the wide window.
"""

from __future__ import annotations

import argparse
import sys

import torch
from torch import nn

from seqlearn.conv import conv1d

F64 = torch.float64
T_IN = 24                      # input length for the support test


class Stack(nn.Module):
    """Valid 1-D convolutions ``(C_in, C_out, k, dilation)`` with tanh between them."""

    def __init__(self, layers: list[tuple[int, int, int, int]], gen: torch.Generator,
                 bias: bool = True, linear: bool = False) -> None:
        super().__init__()
        self.spec, self.linear = layers, linear
        self.weights = nn.ParameterList(
            nn.Parameter(torch.randn(o, i, k, generator=gen, dtype=F64) / (i * k) ** 0.5)
            for i, o, k, _ in layers)
        self.biases = nn.ParameterList(
            nn.Parameter(0.1 * torch.randn(o, generator=gen, dtype=F64)) for _, o, _, _ in layers
        ) if bias else None

    @property
    def field(self) -> int:
        return 1 + sum((k - 1) * d for _, _, k, d in self.spec)

    def forward(self, x: torch.Tensor) -> torch.Tensor:     # (B, C_in, T) -> (B, C_out, T-R+1)
        for n, ((_, _, _, d), w) in enumerate(zip(self.spec, self.weights)):
            x = conv1d(x, w, None if self.biases is None else self.biases[n], dilation=d)
            if n < len(self.spec) - 1 and not self.linear:
                x = torch.tanh(x)
        return x


def support(stack: Stack) -> torch.Tensor:
    """Boolean (T_out, T_in): does any output channel at t depend on any input at s?"""
    c_in = stack.spec[0][0]
    x = torch.randn(1, c_in, T_IN, dtype=F64)
    jac = torch.autograd.functional.jacobian(lambda v: stack(v)[0], x)  # (C_out, T_out, 1, C_in, T)
    return (jac != 0).any(dim=0).any(dim=1).any(dim=1)


def linear_dimension(layers, gen: torch.Generator) -> tuple[int, int]:
    """Rank of d(effective kernel)/d(parameters) for the linear stack, and the kernel count."""
    stack = Stack(layers, gen, bias=False, linear=True)
    c_in, c_out, field = layers[0][0], layers[-1][1], stack.field
    basis = torch.eye(c_in * field, dtype=F64).view(c_in * field, c_in, field)  # unit impulses
    names = [n for n, _ in stack.named_parameters()]
    params = tuple(p.detach() for p in stack.parameters())

    def kernel(*ps):
        out = torch.func.functional_call(stack, dict(zip(names, ps)), (basis,))
        return out.reshape(-1)                                    # (C_in R * C_out,)

    jac = torch.autograd.functional.jacobian(kernel, params)
    jac = torch.cat([j.reshape(j.shape[0], -1) for j in jac], dim=1)
    return int(torch.linalg.matrix_rank(jac)), c_in * c_out * field


def closed_form(layers) -> int:
    return sum(k * i * o + o for i, o, k, _ in layers)


C = 8
CASES = [   # (name, layers), wide window first in each pair
    ("one window, k = 5", [(C, C, 5, 1)]),
    ("two layers, k = 3", [(C, C, 3, 1), (C, C, 3, 1)]),
    ("one window, k = 9", [(C, C, 9, 1)]),
    ("four layers, k = 3", [(C, C, 3, 1)] * 4),
    ("one window, k = 16", [(C, C, 16, 1)]),
    ("k = 4, then k = 4 dilated 4", [(C, C, 4, 1), (C, C, 4, 4)]),
    ("one window, k = 8", [(C, C, 8, 1)]),
    ("k = 2, dilations 1, 2, 4", [(C, C, 2, 1), (C, C, 2, 2), (C, C, 2, 4)]),
    ("MLP 8 -> 16 -> 2, window 16", [(8, 16, 16, 1), (16, 2, 1, 1)]),
    ("distributed, k1 = 4, k2 = 13", [(8, 16, 4, 1), (16, 2, 13, 1)]),
    ("distributed, k1 = 4, k2 = 4 dilated 4", [(8, 16, 4, 1), (16, 2, 4, 4)]),
    ("MLP 2 -> 16 -> 8, window 16", [(2, 16, 16, 1), (16, 8, 1, 1)]),
    ("distributed, k1 = 4, k2 = 13", [(2, 16, 4, 1), (16, 8, 13, 1)]),
]
WIDE = {0, 2, 4, 6, 8, 11}          # indices of the wide windows; the rows after are compared


def main(seeds: list[int]) -> int:
    torch.set_num_threads(1)
    failures = []
    print(f"C = {C} channels unless stated; R = receptive field; support over seeds "
          f"{seeds[0]}-{seeds[-1]}")
    print(f"{'case':40s} {'R':>4s} {'params':>7s} {'support':>8s}  linear dim / kernels")
    reference = None
    for n, (name, layers) in enumerate(CASES):
        gen = torch.Generator().manual_seed(seeds[0])
        stack = Stack(layers, gen)
        params = sum(p.numel() for p in stack.parameters())
        if params != closed_form(layers):
            failures.append(f"{name}: {params} != closed form {closed_form(layers)}")
        supports = []
        for seed in seeds:
            torch.manual_seed(seed)
            s = support(Stack(layers, torch.Generator().manual_seed(seed)))
            t, r = torch.meshgrid(torch.arange(s.shape[0]), torch.arange(T_IN), indexing="ij")
            if not torch.equal(s, (r >= t) & (r < t + stack.field)):
                failures.append(f"{name}, seed {seed}: support is not the window")
            supports.append(s)
        if n in WIDE:
            reference, same = (stack.field, supports), "-"
        else:
            same = "same" if (stack.field == reference[0] and all(
                torch.equal(a, b) for a, b in zip(supports, reference[1]))) else "DIFFERENT"
            if same != "same":
                failures.append(f"{name}: support differs from the wide window")
        dims = {linear_dimension(layers, torch.Generator().manual_seed(s)) for s in seeds}
        if len(dims) != 1:
            failures.append(f"{name}: linear dimension depends on the seed: {dims}")
        dim, kernels = min(dims)
        print(f"{name:40s} {stack.field:4d} {params:7d} {same:>8s}  {dim:10d} / {kernels}")
    one = sum(p.numel() for p in nn.Conv2d(C, C, 5).parameters())
    two = sum(p.numel() for m in (nn.Conv2d(C, C, 3), nn.Conv2d(C, C, 3)) for p in m.parameters())
    print(f"2-D, C = {C}: one 5x5 layer {one}, two 3x3 layers {two}")
    for L, k in ((2, 3), (4, 3)):                     # the stride-1 excess, (L-1)(C^2 + C)
        if L * (k * C * C + C) - ((L * (k - 1) + 1) * C * C + C) != (L - 1) * (C * C + C):
            failures.append("stride-1 excess formula")
    if failures:
        print("FAILED:", *failures, sep="\n  ")
        return 1
    print(f"all closed forms and supports held for seeds {seeds}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(5)))
    sys.exit(main(parser.parse_args().seeds))
