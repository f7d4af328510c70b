"""seqlearn.associative: soft lookup against a loop, its gradients, and the hard limit."""

from __future__ import annotations

import pytest
import torch

from seqlearn.associative import hard_lookup, soft_lookup

F64 = torch.float64


def test_soft_lookup_equals_a_loop_and_respects_the_mask():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, dtype=F64, generator=g)
    keys = torch.randn(3, 5, 4, dtype=F64, generator=g)
    values = torch.randn(3, 5, 2, dtype=F64, generator=g)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 0, 1, 0, 0], [0, 0, 0, 0, 0]], dtype=torch.bool)
    s, c = soft_lookup(x, keys, values, temperature=0.7, mask=mask)
    for b in range(3):
        allowed = [i for i in range(5) if mask[b, i]]
        if not allowed:
            assert torch.count_nonzero(c[b]) == 0 and torch.count_nonzero(s[b]) == 0
            continue
        scores = torch.stack([keys[b, i] @ x[b] / 0.7 for i in allowed])
        weights = torch.exp(scores) / torch.exp(scores).sum()
        torch.testing.assert_close(c[b, allowed], weights)
        torch.testing.assert_close(s[b], sum(w * values[b, i] for w, i in zip(weights, allowed)))


def test_gradients_reach_the_address_keys_and_values():
    g = torch.Generator().manual_seed(1)
    x, keys, values = (torch.randn(*shape, dtype=F64, generator=g, requires_grad=True)
                       for shape in [(2, 3), (2, 4, 3), (2, 4, 5)])
    assert torch.autograd.gradcheck(
        lambda a, k, v: soft_lookup(a, k, v, temperature=0.5)[0], (x, keys, values))


def test_hard_lookup_is_the_zero_temperature_limit():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 3, dtype=F64, generator=g)
    keys = torch.randn(4, 6, 3, dtype=F64, generator=g)
    values = torch.randn(4, 6, 2, dtype=F64, generator=g)
    s_hard, c_hard = hard_lookup(x, keys, values)
    best = (keys @ x[..., None])[..., 0].argmax(-1)
    torch.testing.assert_close(s_hard, values[torch.arange(4), best])
    s_cold, c_cold = soft_lookup(x, keys, values, temperature=1e-4)
    torch.testing.assert_close(c_cold, c_hard)
    torch.testing.assert_close(s_cold, s_hard)
    # ties share the weight equally, as the limit of the softmax does
    tied = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=F64)
    s, c = hard_lookup(torch.tensor([1.0, 0.0], dtype=F64), tied, torch.eye(3, dtype=F64))
    torch.testing.assert_close(c, torch.tensor([0.5, 0.5, 0.0], dtype=F64))
    torch.testing.assert_close(soft_lookup(torch.tensor([1.0, 0.0], dtype=F64), tied,
                                           torch.eye(3, dtype=F64), temperature=1e-3)[1], c)
    # masked slots are never read, and an empty memory reads zero
    mask = torch.tensor([False, True, True])
    assert hard_lookup(torch.tensor([1.0, 0.0], dtype=F64), tied, torch.eye(3, dtype=F64),
                       mask=mask)[1].tolist() == [0.0, 1.0, 0.0]
    s, c = hard_lookup(torch.tensor([1.0, 0.0], dtype=F64), tied, torch.eye(3, dtype=F64),
                       mask=torch.zeros(3, dtype=torch.bool))
    assert torch.count_nonzero(s) == 0 and torch.count_nonzero(c) == 0


def test_refusals():
    x, keys, values = torch.zeros(3), torch.zeros(4, 3), torch.zeros(4, 2)
    with pytest.raises(ValueError, match="temperature must be positive"):
        soft_lookup(x, keys, values, temperature=0.0)
    with pytest.raises(TypeError, match="temperature must be a real number"):
        soft_lookup(x, keys, values, temperature="1")
    with pytest.raises(ValueError, match="keys must have shape"):
        soft_lookup(x, torch.zeros(4, 2), values)
    with pytest.raises(ValueError, match="values must have shape"):
        hard_lookup(x, keys, torch.zeros(5, 2))
    with pytest.raises(TypeError, match="same dtype"):
        soft_lookup(x.double(), keys, values)
    with pytest.raises(TypeError, match="mask must be a bool"):
        soft_lookup(x, keys, values, mask=torch.ones(4))
    with pytest.raises(ValueError, match="mask must have shape"):
        hard_lookup(x, keys, values, mask=torch.ones(5, dtype=torch.bool))
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        soft_lookup([0.0, 0.0, 0.0], keys, values)
