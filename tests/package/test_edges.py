"""The edge-case matrix (``edges.py``, rows in ``edge_entries.py``).

``test_edge_matrix`` runs one cell of the matrix per test: every concrete call of one
column (sizes 0 and 1, float16, NaN entries, ...) for one public name, each judged by
``edges.verdict``: the documented value, or ``ValueError``/``TypeError`` naming the
argument. The problems the fuzzer (``tools/fuzz_edges.py``) found are pinned down, one
by one with the exact answer expected, in the test file of the module they were found in
(the sections "edge cases")."""

from __future__ import annotations

import functools

import pytest
import torch

import edges
from edge_entries import ENTRIES


CELLS = [
    (name, kind)
    for name, entry in sorted(ENTRIES.items())
    if not entry.record
    for kind, count in edges.columns(entry).items()
    if count
]


@functools.lru_cache(maxsize=None)
def _base(name: str) -> edges.Outcome:
    """The valid call of ``name``, run once for all its cells."""
    return edges.run(ENTRIES[name], None)


@pytest.mark.parametrize("name, kind", CELLS, ids=[f"{n[9:]}-{k}" for n, k in CELLS])
def test_edge_matrix(name, kind):
    entry = ENTRIES[name]
    base = _base(name)
    assert base.error is None, f"the valid call of {name} fails: {base.error!r}"
    wrong = []
    for case in edges.cases(entry):
        if case.kind == kind:
            found = edges.verdict(entry, case, 0, base)
            if found:
                wrong.append(f"{case.label}: {found}")
    assert not wrong, f"{name}, column {kind}:\n" + "\n".join(wrong)


def test_the_matrix_has_a_cell_for_every_column():
    used = {kind for _, kind in CELLS}
    assert used == set(
        edges.KINDS
    ), f"columns no row exercises: {set(edges.KINDS) - used}"


def test_reduced_precision_is_judged_against_torchs_own_loss():
    """``Entry.torch_twin``: a float16/bfloat16 result may be as far from float64 as
    1.5 times torch's own, and no farther; without a twin the fixed tolerance holds."""
    entry = edges.Entry(lambda a: None, numeric=True)
    case = edges.Case("bfloat16", "bfloat16", None, {}, torch.bfloat16, expect="half")
    exact = edges.Outcome(result=[torch.tensor([1.0, -1.0], dtype=torch.float64)])
    ours = edges.Outcome(result=[torch.tensor([0.3, -1.0], dtype=torch.bfloat16)])
    torch_as_bad = edges.Outcome(result=[torch.tensor([0.3, -1.0])])
    torch_better = edges.Outcome(result=[torch.tensor([0.9, -1.0])])
    assert edges.judge(entry, case, ours, exact) is not None
    assert edges.judge(entry, case, ours, exact, torch_as_bad) is None
    assert "error" in edges.judge(entry, case, ours, exact, torch_better)


def test_layernorm_of_two_nearly_equal_features_loses_what_torch_loses():
    """The fuzzer's draw (d = 2, bfloat16): the normalised pair is ill-conditioned, and
    seqlearn's LayerNorm gives torch's answer, far from float64 in both."""
    x = torch.tensor([[[1.0, 1.0 + 2.0 ** -9]]], dtype=torch.float64)   # (1, 1, 2)
    exact = torch.nn.functional.layer_norm(x, (2,))
    ours = ENTRIES["seqlearn.layernorm.LayerNorm"]
    from seqlearn.layernorm import LayerNorm
    low = LayerNorm(2).to(torch.bfloat16)(x.to(torch.bfloat16))
    theirs = torch.nn.LayerNorm(2).to(torch.bfloat16)(x.to(torch.bfloat16))
    assert float((low.double() - exact).abs().max()) > 0.25     # ill-conditioned
    torch.testing.assert_close(low, theirs)
    assert ours.torch_twin is not None


def test_a_broadcast_that_is_a_documented_shape_is_not_generated():
    """The fuzzer drew B=3, Tq=Tk=heads=2: MultiHeadAttention's mask (B, Tq, Tk) with a
    trailing axis is then (3, 2, 2, 1), a valid 4-D mask broadcast to (B, heads, Tq, Tk),
    which the layer rightly accepts; at other sizes the case is still generated."""
    entry = ENTRIES["seqlearn.attention.MultiHeadAttention"]
    coincident = {"B": 3, "Tq": 2, "Tk": 2, "d": 6, "heads": 2}
    labels = {c.label for c in edges.cases(entry, coincident) if c.kind == "broadcast"}
    assert "mask[..., None]" not in labels
    apart = {"B": 3, "Tq": 3, "Tk": 4, "d": 4, "heads": 2}
    labels = {c.label for c in edges.cases(entry, apart) if c.kind == "broadcast"}
    assert {"mask[..., None]", "mask[None]"} <= labels
