"""The edge-case matrix (``edges.py``, rows in ``edge_entries.py``) and what it found.

``test_edge_matrix`` runs one cell of the matrix per test: every concrete call of one
column (sizes 0 and 1, float16, NaN entries, ...) for one public name, each judged by
``edges.verdict``: the documented value, or ``ValueError``/``TypeError`` naming the
argument. The tests after it pin down, one by one, the problems the fuzzer
(``tools/fuzz_edges.py``) found, with the exact answer expected.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import edges
from edge_entries import ENTRIES
from seqlearn import (
    associative,
    attention,
    complexity,
    layernorm,
    local_attention,
    memory,
    mingru,
    online_softmax,
    saturation,
    scan,
    seq2seq,
    train,
    transformer,
)
from seqlearn.data import Seq2SeqBatch, StoryBatch, Vocab

F64 = torch.float64
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


# ----------------------------------------------------------------- silent wrong answers


def _memn2n_batch(answer: torch.Tensor) -> tuple[memory.MemN2N, StoryBatch]:
    torch.manual_seed(0)
    model = memory.MemN2N(9, 4, 1).double()
    gen = torch.Generator().manual_seed(1)
    story, query = torch.randint(1, 9, (4, 3, 5), generator=gen), torch.randint(
        1, 9, (4, 5)
    )
    return model, StoryBatch(story, query, answer, torch.zeros(4, 3, dtype=torch.bool))


def test_answer_accuracy_refuses_answers_that_would_broadcast():
    model, batch = _memn2n_batch(torch.zeros(4, dtype=torch.long))
    with torch.no_grad():
        right = model(batch.story, batch.query)[0].argmax(-1)
    assert memory.answer_accuracy(model, batch._replace(answer=right)) == 1.0
    with pytest.raises(ValueError, match=r"batch\.answer must have shape \(B=4\)"):
        memory.answer_accuracy(model, batch._replace(answer=right[:, None]))  # (B, 1)
    with pytest.raises(ValueError, match=r"batch\.answer must hold ids in \[0, 9\)"):
        memory.answer_loss(model, batch._replace(answer=right + 9))


@pytest.mark.parametrize("gap", [1.0, 10.0, 30.0, 200.0, 700.0])
def test_softmax_saturation_keeps_float64_precision_when_saturated(gap):
    scores = torch.tensor([0.0, -gap, -gap, -2 * gap], dtype=F64)
    top, entropy, norm = saturation.softmax_saturation(scores)
    with mpmath.workdps(700):  # enough digits to hold 1 - 2 e^{-700} exactly
        e = [mpmath.exp(mpmath.mpf(-x)) for x in (0.0, gap, gap, 2 * gap)]
        a = [x / sum(e) for x in e]  # the weights
        n = len(a)
        J2 = sum((a[i] * ((i == j) - a[j])) ** 2 for i in range(n) for j in range(n))
        wanted = (max(a), -sum(x * mpmath.log(x) for x in a), mpmath.sqrt(J2))
    for got, want in zip((top, entropy, norm), wanted):
        if want > 1e-150:  # beyond, the square of the norm underflows (docstring)
            assert abs(float(got) - float(want)) <= 1e-12 * float(want)
    if gap == 30.0:  # the old formula, eq-sa-jac-norm as written, returned exactly 0
        assert float(norm) == pytest.approx(2.959e-13, rel=1e-3)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, None, "0.5"])
def test_fit_reads_every_schedule_value_before_the_first_step(bad):
    torch.manual_seed(0)
    model = train.SequenceClassifier(nn.RNN(2, 3, batch_first=True), 3, 2)
    before = [p.detach().clone() for p in model.parameters()]
    x, labels = torch.randn(4, 5, 2), torch.tensor([0, 1, 1, 0])
    error = TypeError if bad is None or isinstance(bad, str) else ValueError
    with pytest.raises(error, match=r"schedule\(2\)"):  # steps 0 and 1 are fine
        train.fit(
            model, lambda k: (x, labels), 4, schedule=lambda k: 1.0 if k < 2 else bad
        )
    for p, p0 in zip(model.parameters(), before):  # no step was taken
        assert torch.equal(p, p0)


def test_fit_stops_before_a_non_finite_gradient_reaches_the_parameters():
    torch.manual_seed(0)
    model = nn.Linear(2, 1).double()
    before = [p.detach().clone() for p in model.parameters()]

    def loss(m, batch):  # 0, with an infinite slope: sqrt(|w - w|) at w
        return (m.weight - m.weight.detach()).abs().sqrt().sum()

    with pytest.raises(ValueError, match="gradient became"):
        train.fit(model, lambda k: None, 1, loss=loss)
    for p, p0 in zip(model.parameters(), before):
        assert torch.equal(p, p0)


def test_hard_lookup_reads_the_largest_score_in_float16_and_propagates_nan():
    x = torch.tensor(
        [300.0, 300.0], dtype=torch.float16
    )  # k . x = 60000 + 60000 > 65504
    keys = torch.tensor([[100.0, 100.0], [1.0, 1.0]], dtype=torch.float16)
    values = torch.tensor([[1.0], [2.0]], dtype=torch.float16)
    s, c = associative.hard_lookup(x, keys, values)
    assert c.tolist() == [1.0, 0.0] and s.tolist() == [1.0]
    s, c = associative.hard_lookup(x, keys, values, mask=torch.tensor([False, True]))
    assert c.tolist() == [0.0, 1.0] and s.tolist() == [2.0]
    s, c = associative.hard_lookup(
        torch.tensor([math.nan, 1.0]), keys.float(), values.float()
    )
    assert bool(s.isnan().all()) and bool(c.isnan().all())


def test_log_space_scan_with_closed_gates_equals_the_loop():
    gen = torch.Generator().manual_seed(3)
    a = torch.rand(2, 6, 3, generator=gen, dtype=F64)
    a[0, 2, 1] = a[1, 0, :] = a[1, 5, 0] = 0.0  # closed gates: log a = -inf
    b = torch.rand(2, 6, 3, generator=gen, dtype=F64) + 0.1
    h0 = torch.rand(2, 3, generator=gen, dtype=F64) + 0.1
    log_a, log_b = a.log().requires_grad_(), b.log().requires_grad_()
    out = mingru.log_space_scan(log_a, log_b, h0.log()).exp()
    torch.testing.assert_close(out, scan.linear_scan(a, b, h0), rtol=1e-12, atol=0)
    out.sum().backward()
    assert bool(log_a.grad.isfinite().all()) and bool(log_b.grad.isfinite().all())
    with pytest.raises(ValueError, match="log_a must be below"):
        mingru.log_space_scan(torch.full((1, 2, 1), math.inf), torch.zeros(1, 2, 1))


def test_extended_scan_refuses_the_methods_it_cannot_run():
    a, b, h0 = torch.full((1, 5, 1), 10.0), torch.ones(1, 5, 1), torch.zeros(1, 1)
    reference = scan.ExtendedScan.apply(a, b, h0, "sequential", 2)
    torch.testing.assert_close(
        scan.ExtendedScan.apply(a, b, h0, "parallel", 2), reference
    )
    for method in ("blelloch", "hillis-steele", "fast"):
        with pytest.raises(
            ValueError, match="method must be 'sequential' or 'parallel'"
        ):
            scan.ExtendedScan.apply(a, b, h0, method, 2)


def test_combine_refuses_operands_that_would_broadcast():
    a, b = torch.ones(3), torch.zeros(3)
    with pytest.raises(ValueError, match="must have one shape"):
        scan.combine((a[:, None], b), (a, b))  # (3, 1) with (3,): 9 maps, silently
    assert scan.combine((2, 1), (3, 4)) == (6, 7)  # numbers as before


# --------------------------------------------------------------------------- crashes


def test_empty_sizes_give_empty_results_or_name_the_argument():
    q = torch.zeros(2, 0, 3, dtype=F64)
    assert local_attention.restricted_attention(q, q, q, 1).shape == (2, 0, 3)
    z = torch.zeros(2, 3, 0, dtype=F64)
    with pytest.raises(ValueError, match="d=0 features.*pass scale="):
        attention.attention(z, z, torch.zeros(2, 3, 2, dtype=F64))
    out, w = attention.attention(z, z, torch.ones(2, 3, 2, dtype=F64), scale=1.0)
    torch.testing.assert_close(w, torch.full((2, 3, 3), 1 / 3, dtype=F64))  # uniform
    empty = torch.zeros(0, 0, dtype=torch.bool)
    with pytest.raises(ValueError, match=r"layers\[0\] must relate T >= 1 positions"):
        complexity.max_path_length([empty])
    with pytest.raises(ValueError, match="within must relate T >= 1 positions"):
        complexity.sequential_steps(empty)


def test_online_normalizer_is_differentiable():
    scores = torch.randn(3, 7, dtype=F64, requires_grad=True)
    m, l = online_softmax.online_normalizer(scores, 3)
    (m + l.log()).sum().backward()
    torch.testing.assert_close(scores.grad, torch.softmax(scores.detach(), -1))


def test_memn2n_refuses_ids_of_another_integer_type():
    model = memory.MemN2N(9, 4, 1)
    ids = torch.ones(2, 3, 4, dtype=torch.uint8)
    with pytest.raises(TypeError, match="story must be a LongTensor of word ids"):
        model(ids, ids[:, 0])


# -------------------------------------------------------------------- torch's behaviour


@pytest.mark.parametrize("affine, bias", [(False, False), (True, False), (True, True)])
def test_layernorm_from_torch_keeps_dtype_and_missing_parameters(affine, bias):
    m = nn.LayerNorm(5, eps=1e-3, elementwise_affine=affine, bias=bias, dtype=F64)
    if affine:
        nn.init.normal_(m.weight)
    ours = layernorm.LayerNorm.from_torch(m)
    x = torch.randn(2, 3, 5, dtype=F64)
    torch.testing.assert_close(ours(x), m(x), rtol=1e-12, atol=1e-12)
    assert (ours.weight is None) == (m.weight is None) and (ours.bias is None) == (
        m.bias is None
    )
    if not affine:  # no parameters: any floating dtype is normalised, as in torch
        torch.testing.assert_close(ours(x.float()), m(x.float()))


def _errors(dtype, fn, q, k, v):
    """Largest error of ``fn`` in ``dtype`` against float64 attention."""
    reference = F.scaled_dot_product_attention(q, k, v)
    return float(
        (fn(q.to(dtype), k.to(dtype), v.to(dtype)).double() - reference).abs().max()
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("scale", [1.0, 3.0, 40.0])
def test_reduced_precision_attention_is_as_accurate_as_sdpa(dtype, scale):
    gen = torch.Generator().manual_seed(int(scale))
    q, k, v = (torch.randn(2, 2, 48, 32, generator=gen, dtype=F64) for _ in range(3))
    q = q * scale  # scale 40: float16 scores q . k overflow unless summed in float32
    sdpa = _errors(dtype, F.scaled_dot_product_attention, q, k, v)
    plain = _errors(dtype, lambda q, k, v: attention.attention(q, k, v)[0], q, k, v)
    blocked = _errors(
        dtype,
        lambda q, k, v: online_softmax.memory_efficient_attention(
            q, k, v, block_size=16
        ),
        q,
        k,
        v,
    )
    assert math.isfinite(plain) and math.isfinite(blocked)
    assert plain <= 1.5 * sdpa and blocked <= 1.5 * sdpa, (plain, blocked, sdpa)


def test_reduced_precision_attention_gradients_are_finite():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(1, 16, 8, generator=gen).to(torch.float16).requires_grad_()
        for _ in range(3)
    )
    out = online_softmax.memory_efficient_attention(q * 40, k, v, block_size=4)
    out.float().sum().backward()
    assert out.dtype == torch.float16
    assert all(bool(t.grad.isfinite().all()) for t in (q, k, v))


# ------------------------------------------------------------------------- vocabularies


def test_every_model_takes_a_vocabulary_or_its_size():
    chars = Vocab("abcd")  # 7 ids
    for make in (
        lambda v: seq2seq.Seq2Seq(v, v, 4, score="dot"),
        lambda v: transformer.Transformer(v, v, 4, 2, 1, 8),
        lambda v: memory.MemN2N(v, 4, 1),
    ):
        torch.manual_seed(0)
        by_vocab = make(chars)
        torch.manual_seed(0)
        by_size = make(len(chars))
        for p, q in zip(by_vocab.parameters(), by_size.parameters()):
            assert torch.equal(p, q)
    model = seq2seq.Seq2Seq(7, 7, 4, score="dot")
    assert (model.pad, model.bos, model.eos) == (chars.pad, chars.bos, chars.eos)
    with pytest.raises(ValueError, match="tgt_vocab must be at least 3"):
        seq2seq.Seq2Seq(7, 2, 4)
    with pytest.raises(
        TypeError, match=r"src_vocab must be an int \(the vocabulary's size\)"
    ):
        seq2seq.Seq2Seq("abcd", chars, 4)


def test_seq2seq_batches_are_checked_field_by_field():
    chars = Vocab("abcd")
    model = seq2seq.Seq2Seq(chars, chars, 4)
    src = torch.tensor([[3, 4, 5]])
    batch = Seq2SeqBatch(
        src,
        torch.tensor([3]),
        src > 0,
        torch.tensor([[1, 3]]),
        torch.tensor([[3, 2]]),
        torch.ones(1, 2, dtype=torch.bool),
    )
    assert seq2seq.greedy_exact_match(model, batch).shape == (1,)
    with pytest.raises(ValueError, match=r"batch\.tgt_out must hold ids in \[0, 7\)"):
        seq2seq.greedy_exact_match(
            model, batch._replace(tgt_out=torch.tensor([[3, 9]]))
        )
    with pytest.raises(TypeError, match=r"batch\.tgt_mask must be a bool tensor"):
        transformer.transformer_loss(
            transformer.Transformer(chars, chars, 4, 2, 1, 8),
            batch._replace(tgt_mask=batch.tgt_mask.long()),
        )
