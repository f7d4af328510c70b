"""seqlearn.warmup: the paper's schedule and the linear warm-up against their formulas,
the loop that uses them, Adam's moments replayed against torch.optim.Adam; properties at
random sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from torch import nn

from properties import covers, numpy_of, randn, refuses, seeds
from seqlearn import warmup
from seqlearn.warmup import adam_moments, fit_scheduled, linear_warmup_rate, noam_rate


F64 = torch.float64


def test_noam_rate_is_the_papers_formula():
    d, w = 512, 4000
    for step in (1, 10, 3999, 4000, 4001, 100_000):
        want = d ** -0.5 * min(step ** -0.5, step * w ** -1.5)
        assert noam_rate(step, d, w) == pytest.approx(want, rel=1e-15)
    rates = [noam_rate(n, d, w) for n in range(1, 10_000)]
    assert int(np.argmax(rates)) + 1 == w  # the peak is at step w
    assert noam_rate(4000, 512, 4000, factor=2.0) == pytest.approx(2 * (512 * 4000) ** -0.5)
    with pytest.raises(ValueError, match="step must be positive"):
        noam_rate(0, d, w)


def test_linear_warmup_rate():
    steps, w = 10, 4
    rates = [linear_warmup_rate(k, steps, w) for k in range(steps)]
    assert rates[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert rates[4] == pytest.approx(1.0) and rates[-1] == pytest.approx(1 / 6)
    assert [linear_warmup_rate(k, steps, 0) for k in range(steps)] == pytest.approx(
        [1 - k / steps for k in range(steps)])  # w = 0: the decay of seqlearn.train.fit
    with pytest.raises(ValueError, match="step must be at most 9"):
        linear_warmup_rate(10, steps, w)
    with pytest.raises(ValueError, match="warmup must be at most 9"):
        linear_warmup_rate(0, steps, 10)


def test_fit_scheduled_uses_the_schedule_and_learns():
    torch.manual_seed(8)
    model = nn.Linear(3, 1).double()
    x = torch.randn(32, 3, dtype=F64)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]], dtype=F64)
    seen = []

    def loss(m, batch):
        return (m(batch[0]) - batch[1]).pow(2).mean()

    def schedule(k):
        seen.append(k)
        return linear_warmup_rate(k, 200, 10)

    losses = fit_scheduled(model, lambda k: (x, y), 200, loss=loss, lr=0.05, schedule=schedule)
    assert seen == list(range(200)) and len(losses) == 200
    assert losses[-1] < 1e-3 * losses[0]
    # Adam's first update is lr * sign(gradient) in every coordinate, whatever its size
    model = nn.Linear(3, 1).double()
    before = [p.detach().clone() for p in model.parameters()]
    fit_scheduled(model, lambda k: (x, y), 1, loss=loss, lr=1e-3, clip=None)
    for p, p0 in zip(model.parameters(), before):
        torch.testing.assert_close((p - p0).abs(), torch.full_like(p, 1e-3), rtol=1e-6, atol=0)
    with pytest.raises(TypeError, match="schedule must be callable"):
        fit_scheduled(model, lambda k: (x, y), 1, loss=loss, lr=0.1, schedule=0.5)
    with pytest.raises(ValueError, match="lr must be positive"):
        fit_scheduled(model, lambda k: (x, y), 1, loss=loss, lr=0.0)
    with pytest.raises(ValueError, match="warm up longer"):
        fit_scheduled(model, lambda k: (x * float("nan"), y), 1, loss=loss, lr=0.1)


@pytest.mark.parametrize("betas", [(0.9, 0.999), (0.9, 0.98), (0.0, 0.5)])
def test_adam_moments_replay_torch_adam(betas):
    torch.manual_seed(9)
    grads = torch.randn(3, 6, 5, dtype=F64) * torch.logspace(-4, 1, 5, dtype=F64)  # (runs, N, P)
    rate, step = adam_moments(grads, betas=betas, eps=1e-8)
    assert rate.shape == step.shape == grads.shape
    for r in range(3):  # reference: torch.optim.Adam at lr 1, fed the same gradients
        theta = torch.zeros(5, dtype=F64, requires_grad=True)
        adam = torch.optim.Adam([theta], lr=1.0, betas=betas, eps=1e-8)
        for n in range(6):
            before = theta.detach().clone()
            theta.grad = grads[r, n].clone()
            adam.step()
            torch.testing.assert_close(before - theta.detach(), step[r, n], rtol=1e-10,
                                       atol=1e-14)
    torch.testing.assert_close(step[:, 0], grads[:, 0].sign() * (1 - 1e-8 * rate[:, 0]))
    with pytest.raises(ValueError, match="betas"):
        adam_moments(grads, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="eps"):
        adam_moments(grads, eps=0.0)
    with pytest.raises(ValueError, match="grads"):
        adam_moments(grads[0, 0])


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.warmup.adam_moments")
@given(seed=seeds, N=st.integers(1, 6), P=st.integers(1, 5), b1=st.floats(0.0, 0.95),
       b2=st.floats(0.5, 0.999))
def test_adam_moments_are_the_bias_corrected_averages(seed, N, P, b1, b2):
    g = randn(seed, N, P)
    rate, step = warmup.adam_moments(g, betas=(b1, b2), eps=1e-12)
    for n in range(1, N + 1):  # brute force: the weighted sums of eq-tf-adam
        w1 = torch.tensor([(1 - b1) * b1 ** (n - i) for i in range(1, n + 1)], dtype=F64)
        w2 = torch.tensor([(1 - b2) * b2 ** (n - i) for i in range(1, n + 1)], dtype=F64)
        m_hat = (w1 @ g[:n]) / (1 - b1**n)
        v_hat = (w2 @ g[:n] ** 2) / (1 - b2**n)
        torch.testing.assert_close(rate[n - 1], 1 / (v_hat.sqrt() + 1e-12))
        torch.testing.assert_close(step[n - 1], m_hat / (v_hat.sqrt() + 1e-12))
    refuses(warmup.adam_moments, g, betas=(b1, 1.5))
    refuses(warmup.adam_moments, numpy_of(g))


@covers("seqlearn.warmup.noam_rate", "seqlearn.warmup.linear_warmup_rate",
        "seqlearn.warmup.fit_scheduled")
@given(seed=seeds, steps=st.integers(2, 30), warm=st.integers(1, 40), d=st.integers(1, 600))
def test_warmup_rates_rise_then_fall(seed, steps, warm, d):
    rates = [warmup.noam_rate(n, d, warm) for n in range(1, 3 * warm + 2)]
    peak = int(np.argmax(rates)) + 1
    assert peak == warm
    assert rates[warm - 1] == max(rates) == (d * warm) ** -0.5 or math.isclose(
        max(rates), (d * warm) ** -0.5, rel_tol=1e-12)
    w = min(warm, steps - 1)
    linear = [warmup.linear_warmup_rate(k, steps, w) for k in range(steps)]
    assert max(linear) == 1.0 and all(0 < r <= 1 for r in linear)
    assert all(a <= b for a, b in zip(linear[:w], linear[1:w + 1]))  # rising while warming
    assert all(a >= b for a, b in zip(linear[w:], linear[w + 1:]))  # then falling
    torch.manual_seed(seed)
    model = nn.Linear(2, 1).double()
    lrs = []

    def loss(m, batch):
        lrs.append(warmup.linear_warmup_rate(len(lrs), steps, w))
        return m(batch).pow(2).mean()

    losses = warmup.fit_scheduled(model, lambda k: randn(seed + k, 4, 2), steps, loss=loss,
                                  lr=0.01, schedule=lambda k: linear[k])
    assert len(losses) == steps and lrs == linear
    refuses(warmup.noam_rate, 0, d, warm)
    refuses(warmup.linear_warmup_rate, steps, steps, w)
    refuses(warmup.fit_scheduled, model, lambda k: None, steps, loss=loss, lr=-1.0)
    refuses(warmup.fit_scheduled, model, "batches", steps, loss=loss, lr=0.1)
