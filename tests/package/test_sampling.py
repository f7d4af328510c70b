"""seqlearn.sampling: temperature and top-k against their definition and a chi-square
test; properties at random sizes."""

import math

import pytest
import torch
from hypothesis import given, strategies as st

from properties import covers, refuses, seeds
from seqlearn import language_model as lm, sampling
from seqlearn.language_model import CausalTransformerLM, RecurrentLM
from seqlearn.sampling import generate, sample_next, sampling_distribution


F64 = torch.float64


def _brute(logits, tau, k):
    """eq-lm-sampling for one row, written out with a sort and a Python sum."""
    z = logits.tolist()
    k = len(z) if k is None else min(k, len(z))  # k beyond V keeps every token
    kept = [v for v in range(len(z)) if z[v] >= sorted(z, reverse=True)[k - 1]]
    weights = {v: math.exp(z[v] / tau) for v in kept}
    total = sum(weights.values())
    return torch.tensor([weights.get(v, 0.0) / total for v in range(len(z))], dtype=F64)


@pytest.mark.parametrize("tau", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("k", [None, 1, 3, 7, 20])
def test_distribution_equals_the_definition(tau, k):
    logits = torch.randn(4, 7, generator=torch.Generator().manual_seed(0), dtype=F64)
    q = sampling_distribution(logits, tau, k)
    for row in range(4):
        torch.testing.assert_close(q[row], _brute(logits[row], tau, k))


def test_ties_at_the_boundary_are_kept():
    logits = torch.tensor([2.0, 1.0, 1.0, 0.0], dtype=F64)
    q = sampling_distribution(logits, 1.0, 2)
    assert bool((q[:3] > 0).all()) and q[3] == 0


def test_temperature_zero_and_top_one_are_greedy():
    logits = torch.randn(5, 9, generator=torch.Generator().manual_seed(1), dtype=F64)
    best = logits.argmax(-1)
    greedy = torch.nn.functional.one_hot(best, 9).to(F64)
    torch.testing.assert_close(sampling_distribution(logits, 0.0), greedy)
    for tau in (0.5, 1.0, 3.0):
        torch.testing.assert_close(sampling_distribution(logits, tau, 1), greedy)
        assert sample_next(logits, tau, 1).tolist() == best.tolist()
    assert sample_next(logits, 0.0).tolist() == best.tolist()
    # the limit tau -> 0: the mass of the best token tends to 1
    gaps = [1 - float(sampling_distribution(logits, tau)[0, best[0]]) for tau in (1, 0.1, 0.01)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-6


def test_draws_match_the_distribution_by_a_chi_square_test():
    logits = torch.tensor([1.5, 0.2, -0.3, 0.9, 0.0, -1.0, 2.0, 0.4], dtype=F64)
    tau, k, n = 0.8, 5, 40_000
    q = sampling_distribution(logits, tau, k)
    draws = sample_next(logits.expand(n, 8), tau, k,
                        generator=torch.Generator().manual_seed(0))
    counts = torch.bincount(draws, minlength=8).to(F64)
    kept = q > 0
    assert int(kept.sum()) == k and bool((counts[~kept] == 0).all())
    expected = n * q[kept]
    chi2 = float(((counts[kept] - expected) ** 2 / expected).sum())
    p_value = float(torch.special.gammaincc(torch.tensor((k - 1) / 2, dtype=F64),
                                            torch.tensor(chi2 / 2, dtype=F64)))
    assert p_value > 0.001, (chi2, p_value)
    # and a wrong distribution (no temperature) fails the same test
    wrong = n * sampling_distribution(logits, 1.0, k)[kept]
    chi2_wrong = float(((counts[kept] - wrong) ** 2 / wrong).sum())
    assert chi2_wrong > 100


def test_validation():
    logits = torch.zeros(2, 4)
    with pytest.raises(ValueError, match="temperature must be at least 0"):
        sampling_distribution(logits, -1.0)
    with pytest.raises(ValueError, match="top_k must be positive"):
        sampling_distribution(logits, 1.0, 0)
    with pytest.raises(ValueError, match="finite"):
        sampling_distribution(torch.tensor([0.0, float("nan")]))
    with pytest.raises(TypeError, match="floating"):
        sample_next(torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="generator"):
        sample_next(logits, generator=1)
    with pytest.raises(TypeError, match="torch.nn.Module"):
        generate("model", torch.zeros(1, 2, dtype=torch.long), 3)


@pytest.mark.parametrize("make", [lambda: RecurrentLM(9, 3, 5, cell="lstm").double(),
                                  lambda: RecurrentLM(9, 3, 5, cell="elman", fast=True),
                                  lambda: CausalTransformerLM(9, 8, 2, 1, 16, context=6)])
def test_greedy_generation_equals_a_loop_of_full_forwards(make):
    torch.manual_seed(0)
    model = make()
    prompt = torch.randint(0, 9, (2, 3))
    out = generate(model, prompt, 8, temperature=0.0)
    context = model.context if hasattr(model, "context") else None
    seq = prompt.clone()
    with torch.no_grad():
        for _ in range(8):
            window = seq if context is None else seq[:, -context:]
            logits, _ = model(window)
            seq = torch.cat([seq, logits[:, -1].argmax(-1, keepdim=True)], 1)
    assert out.tolist() == seq[:, 3:].tolist()
    assert generate(model, prompt, 8, top_k=1).tolist() == out.tolist()


def test_sampled_generation_is_reproducible_with_a_generator():
    model = RecurrentLM(9, 3, 5)
    prompt = torch.zeros(3, 2, dtype=torch.long)
    a = generate(model, prompt, 10, temperature=1.0, generator=torch.Generator().manual_seed(2))
    b = generate(model, prompt, 10, temperature=1.0, generator=torch.Generator().manual_seed(2))
    assert a.shape == (3, 10) and a.tolist() == b.tolist()
    assert model.training


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.sampling.sampling_distribution", "seqlearn.sampling.sample_next",
        "seqlearn.sampling.generate")
@given(seed=seeds, V=st.integers(1, 8), tau=st.floats(0.05, 5.0),
       k=st.one_of(st.none(), st.integers(1, 9)))
def test_sampling_distribution_is_a_restricted_softmax(seed, V, tau, k):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(3, V, generator=g, dtype=F64)
    q = sampling.sampling_distribution(logits, tau, k)
    torch.testing.assert_close(q.sum(-1), torch.ones(3, dtype=F64))
    kept = k if k is not None and k < V else V
    assert bool(((q > 0).sum(-1) >= min(kept, V)).all())
    if kept == V and k != 1:
        torch.testing.assert_close(q, torch.softmax(logits / tau, -1))
    draws = sampling.sample_next(logits, tau, k, generator=g)
    assert bool((q.gather(-1, draws[:, None]) > 0).all())  # never a token left out
    assert sampling.sample_next(logits, 0.0).tolist() == logits.argmax(-1).tolist()
    model = lm.RecurrentLM(V, 2, 3)
    out = sampling.generate(model, torch.zeros(2, 1, dtype=torch.long), 3, temperature=tau,
                            top_k=k, generator=g)
    assert out.shape == (2, 3) and int(out.max()) < V
    refuses(sampling.sampling_distribution, logits, -tau)
    refuses(sampling.sample_next, logits, tau, 0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_logits_are_scaled_in_float32(dtype):
    # a low temperature magnifies the rounding of logits / tau in 8 or 11 bits
    gen = torch.Generator().manual_seed(0)
    logits = (4 * torch.randn(64, 5, generator=gen)).to(dtype)
    exact = torch.softmax(logits.double() / 0.1, dim=-1)
    q = sampling_distribution(logits, temperature=0.1)
    assert q.dtype == dtype
    reference = torch.softmax(logits.float() / 0.1, dim=-1).to(dtype)
    ours_error = (q.double() - exact).abs().max()
    torch_error = (reference.double() - exact).abs().max()
    assert ours_error <= 1.5 * torch_error + 1e-3, (ours_error, torch_error)
