"""seqlearn.causal: each step from the GRU to causal attention against loops over t and
i; the wording of each error; properties at random sizes."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import causal, transformer
from seqlearn.attention import MultiHeadAttention, attention
from seqlearn.causal import (KeyValueAttention, MultiHeadCausalAttention, add_positions,
                             causal_attention_loop, free_candidates)
from seqlearn.transformer import sinusoidal_positional_encoding
from tensors import rand


F64 = dict(dtype=torch.float64)
TIGHT = dict(rtol=1e-10, atol=1e-12)


def reference(q, k, v, scale=None):
    """h_t = sum_{i<=t} alpha_{t,i} v_i, alpha_{t,i} = exp(s q_t.k_i) / sum_{j<=t} exp(s q_t.k_j).

    Plain Python floats, no max shift and no torch: independent of both library paths.
    """
    B, T, d = q.shape
    s = 1 / math.sqrt(d) if scale is None else scale
    q, k, v = q.tolist(), k.tolist(), v.tolist()
    h = torch.zeros(B, T, len(v[0][0]), **F64)
    alpha = torch.zeros(B, T, T, **F64)
    for b in range(B):
        for t in range(T):
            w = [math.exp(s * sum(a * c for a, c in zip(q[b][t], k[b][i]))) for i in range(t + 1)]
            for i in range(t + 1):
                alpha[b, t, i] = w[i] / sum(w)
                h[b, t] += alpha[b, t, i] * torch.tensor(v[b][i], **F64)
    return h, alpha


def assert_pairs_close(got, ref):
    for a, b in zip(got, ref, strict=True):
        torch.testing.assert_close(a, b, **TIGHT)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), B=st.integers(1, 3), T=st.integers(1, 7),
       d=st.integers(1, 5), dv=st.integers(1, 4))
def test_loop_equals_reference_and_vectorised_attention(seed, B, T, d, dv):
    q, k, v = rand(B, T, d, seed=seed), rand(B, T, d, seed=seed + 1), rand(B, T, dv, seed=seed + 2)
    loop = causal_attention_loop(q, k, v)
    assert_pairs_close(loop, reference(q, k, v))
    assert_pairs_close(attention(q, k, v, causal=True), loop)


def test_loop_on_two_steps_by_hand():
    q = torch.tensor([[[1.0], [2.0]]], **F64)
    k = torch.tensor([[[3.0], [-1.0]]], **F64)
    v = torch.tensor([[[5.0], [7.0]]], **F64)
    h, alpha = causal_attention_loop(q, k, v, scale=1.0)
    a = math.exp(6.0) / (math.exp(6.0) + math.exp(-2.0))  # query 2 . key 3 vs query 2 . key -1
    torch.testing.assert_close(alpha, torch.tensor([[[1.0, 0.0], [a, 1 - a]]], **F64), **TIGHT)
    torch.testing.assert_close(h, torch.tensor([[[5.0], [5 * a + 7 * (1 - a)]]], **F64), **TIGHT)


def test_loop_gradients_equal_vectorised_gradients():
    q, k, v = (rand(2, 5, 3, seed=s).requires_grad_() for s in (1, 2, 3))
    cot = rand(2, 5, 3, seed=4)
    grads_loop = torch.autograd.grad((causal_attention_loop(q, k, v)[0] * cot).sum(), (q, k, v))
    grads_vec = torch.autograd.grad((attention(q, k, v, causal=True)[0] * cot).sum(), (q, k, v))
    assert_pairs_close(grads_loop, grads_vec)


def test_step1_free_candidates():
    fx = rand(3, 6, 4)
    h, alpha = free_candidates(fx)
    assert_pairs_close((h, alpha), reference(fx, fx, fx))
    torch.testing.assert_close(h[:, 0], fx[:, 0], **TIGHT)  # h_0 = f(x_0): only itself to see
    assert bool((alpha.triu(1) == 0).all())
    torch.testing.assert_close(alpha.sum(-1), torch.ones(3, 6, **F64), **TIGHT)
    assert_pairs_close(free_candidates(fx, scale=0.5), reference(fx, fx, fx, scale=0.5))


def linear(x, layer):
    """Apply a Linear layer vector by vector: y_t = W x_t (+ b)."""
    W, b = layer.weight, layer.bias
    return torch.stack([torch.stack([W @ x_bt + (0 if b is None else b) for x_bt in x_b]) for x_b in x])


@pytest.mark.parametrize("bias", [False, True])
def test_step2_keys_queries_values(bias):
    step = KeyValueAttention(4, 3, 5, bias=bias).double()
    fx = rand(2, 6, 4, seed=5)
    ref = reference(linear(fx, step.Q), linear(fx, step.K), linear(fx, step.V))
    assert_pairs_close(step(fx), ref)


def test_step2_with_identity_maps_is_step1():
    step = KeyValueAttention(4, 4).double()
    with torch.no_grad():
        for layer in (step.Q, step.K, step.V):
            layer.weight.copy_(torch.eye(4))
    fx = rand(2, 5, 4, seed=6)
    assert_pairs_close(step(fx), free_candidates(fx))


def test_step2_parameter_gradients_equal_loop_gradients():
    step = KeyValueAttention(3, 2, 4).double()
    fx = rand(2, 4, 3, seed=7)
    cot = rand(2, 4, 4, seed=8)
    params = list(step.parameters())
    grads = torch.autograd.grad((step(fx)[0] * cot).sum(), params)
    h_loop, _ = causal_attention_loop(step.Q(fx), step.K(fx), step.V(fx))
    assert_pairs_close(grads, torch.autograd.grad((h_loop * cot).sum(), params))


def test_step3_heads_are_concatenated():
    step = MultiHeadCausalAttention(6, 3, d_k=2, d_v=4).double()
    fx = rand(2, 5, 6, seed=9)
    h, alpha = step(fx)
    assert h.shape == (2, 5, 12) and alpha.shape == (2, 3, 5, 5)
    for n, head in enumerate(step.heads):
        h_n, alpha_n = reference(linear(fx, head.Q), linear(fx, head.K), linear(fx, head.V))
        torch.testing.assert_close(h[..., 4 * n: 4 * n + 4], h_n, **TIGHT)
        torch.testing.assert_close(alpha[:, n], alpha_n, **TIGHT)


def test_step3_one_head_is_step2():
    step = MultiHeadCausalAttention(4, 1, d_k=3).double()
    fx = rand(2, 5, 4, seed=10)
    h, alpha = step(fx)
    h2, alpha2 = step.heads[0](fx)
    assert_pairs_close((h, alpha), (h2, alpha2[:, None]))


def test_step3_equals_multi_head_attention_without_output_projection():
    d, N = 6, 3
    step = MultiHeadCausalAttention(d, N, d_k=d // N, d_v=d // N).double()
    mha = MultiHeadAttention(d, N, bias=False).double()
    with torch.no_grad():  # stack the heads' maps into the big projections; W^O = I
        for name in "QKV":
            big = getattr(mha, f"{name.lower()}_proj").weight
            big.copy_(torch.cat([getattr(head, name).weight for head in step.heads]))
        mha.out_proj.weight.copy_(torch.eye(d))
    fx = rand(2, 5, d, seed=11)
    assert_pairs_close(step(fx), mha(fx, fx, fx, causal=True))


def test_step4_positions_are_added_and_break_permutation_invariance():
    fx = rand(2, 6, 4, seed=12)
    torch.testing.assert_close(add_positions(fx),
                               fx + sinusoidal_positional_encoding(6, 4, dtype=torch.float64), **TIGHT)
    perm = torch.tensor([3, 0, 4, 1, 2, 5])  # shuffle the past, keep the last step in place
    last = free_candidates(fx)[0][:, -1]
    torch.testing.assert_close(free_candidates(fx[:, perm])[0][:, -1], last, **TIGHT)
    with_pos = free_candidates(add_positions(fx))[0][:, -1]
    shuffled = free_candidates(add_positions(fx[:, perm]))[0][:, -1]
    assert (with_pos - shuffled).abs().max() > 1e-3  # now the order of the past matters


def test_step5_nonlinearity_on_each_head():
    g = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh()).double()
    step = MultiHeadCausalAttention(5, 2, d_k=3, d_v=4, g=g).double()
    fx = rand(2, 6, 5, seed=13)
    h, _ = step(fx)
    assert h.shape == (2, 6, 6)
    for n, head in enumerate(step.heads):
        h_n, _ = reference(linear(fx, head.Q), linear(fx, head.K), linear(fx, head.V))
        torch.testing.assert_close(h[..., 3 * n: 3 * n + 3], torch.tanh(linear(h_n, g[0])), **TIGHT)
    plain = MultiHeadCausalAttention(5, 2, d_k=3, d_v=4, g=torch.relu).double()
    plain.load_state_dict({k: v for k, v in step.state_dict().items() if k.startswith("heads")})
    torch.testing.assert_close(plain(fx)[0], torch.cat([torch.relu(head(fx)[0]) for head in step.heads], -1),
                               **TIGHT)


@pytest.mark.parametrize("make", [
    lambda: free_candidates,
    lambda: KeyValueAttention(4, 3).double(),
    lambda: MultiHeadCausalAttention(4, 2, d_k=3, g=torch.tanh).double(),
    lambda: lambda fx: free_candidates(add_positions(fx)),
])
def test_every_step_is_causal(make):
    step = make()
    fx = rand(2, 7, 4, seed=14)
    changed = fx.clone()
    changed[:, 4:] = rand(2, 3, 4, seed=15)  # rewrite the future from t = 4 on
    torch.testing.assert_close(step(changed)[0][:, :4], step(fx)[0][:, :4], **TIGHT)
    assert (step(changed)[0][:, 4:] - step(fx)[0][:, 4:]).abs().max() > 1e-6


@pytest.mark.parametrize("call, error, match", [
    (lambda: free_candidates(rand(5, 4)), ValueError, r"fx must have shape \(B, T, D\)"),
    (lambda: free_candidates(torch.ones(2, 5, 4, dtype=torch.int64)), TypeError, "fx must be a floating-point"),
    (lambda: KeyValueAttention(4, 3).double()(rand(2, 5, 3)), ValueError, r"\(B, T, D=4\)"),
    (lambda: KeyValueAttention(4, 3)(rand(2, 5, 4)), TypeError, "same dtype"),
    (lambda: KeyValueAttention(4, 0), ValueError, "d_k must be positive"),
    (lambda: MultiHeadCausalAttention(4, 0, d_k=2), ValueError, "num_heads must be positive"),
    (lambda: add_positions(rand(4)), ValueError, "fx must have shape"),
    (lambda: causal_attention_loop(rand(2, 5, 3), rand(2, 4, 3), rand(2, 5, 3)), ValueError,
     r"k must have shape \(B=2, T=5, d=3\)"),
    (lambda: causal_attention_loop(rand(2, 5, 3), rand(2, 5, 3), rand(2, 4, 3)), ValueError,
     r"v must have shape \(B=2, T=5, dv\)"),
    (lambda: causal_attention_loop(rand(2, 5, 3).long(), rand(2, 5, 3), rand(2, 5, 3)), TypeError,
     "q must be a floating-point"),
])
def test_validation(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------- the exact wording of each validation error


# Py: each error names the argument at fault and what was expected.


DOUBLE = torch.float64


def _qkv():
    return (torch.zeros(1, 2, 3, dtype=DOUBLE), torch.zeros(1, 2, 3, dtype=DOUBLE),
            torch.zeros(1, 2, 4, dtype=DOUBLE))


@pytest.mark.parametrize("call, error, match", [
    (lambda q, k, v: causal_attention_loop(q, k, v.long()), TypeError,
     r"^v must be a floating-point tensor, got dtype torch\.int64$"),
    (lambda q, k, v: causal_attention_loop(q[0], k, v), ValueError,
     r"^q must have shape \(B, T, d\), got \(2, 3\)$"),
    (lambda q, k, v: causal_attention_loop(q, k, v, scale="1"), TypeError,
     r"^scale must be a real number, got str$"),
    (lambda q, k, v: KeyValueAttention(2.0, 3), TypeError, r"^d_in must be an int, got float$"),
    (lambda q, k, v: KeyValueAttention(3, 2)(q), TypeError,
     r"^fx and the module's parameters must have the same dtype, got torch\.float64 and "
     r"torch\.float32$"),
])
def test_errors_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call(*_qkv())


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.causal.free_candidates", "seqlearn.causal.KeyValueAttention",
        "seqlearn.causal.MultiHeadCausalAttention", "seqlearn.causal.add_positions",
        "seqlearn.positional.sinusoidal_positional_encoding")
@given(seed=seeds, B=sizes, T=sizes, D=sizes, flag=not_bools)
def test_causal_steps_equal_the_loop(seed, B, T, D, flag):
    fx = randn(seed, B, T, D)
    torch.testing.assert_close(causal.free_candidates(fx)[0],
                               causal.causal_attention_loop(fx, fx, fx)[0])
    kv = causal.KeyValueAttention(D, 2).double()
    q, k, v = kv.Q(fx), kv.K(fx), kv.V(fx)
    torch.testing.assert_close(kv(fx)[0], causal.causal_attention_loop(q, k, v)[0])
    h, alpha = causal.MultiHeadCausalAttention(D, 2, 2).double()(fx)
    assert h.shape == (B, T, 2 * D) and alpha.shape == (B, 2, T, T)
    pe = transformer.sinusoidal_positional_encoding(T, D, dtype=DOUBLE)
    t = torch.arange(T, dtype=DOUBLE)[:, None]
    k2 = torch.arange(0, D, 2, dtype=DOUBLE)
    torch.testing.assert_close(pe[:, 0::2], torch.sin(t * 10000.0 ** (-k2 / D)))
    torch.testing.assert_close(causal.add_positions(fx), fx + pe)
    refuses(causal.KeyValueAttention, D, 2, bias=flag)
    refuses(causal.free_candidates, numpy_of(fx))
    refuses(causal.causal_attention_loop, fx, fx, fx, scale="1")
    refuses(transformer.sinusoidal_positional_encoding, T, D, base=math.inf)
    refuses(transformer.sinusoidal_positional_encoding, T, D, dtype=torch.int64)


# ------------------------------------------------ edge cases: mixed dtypes (issue 31)

@pytest.mark.parametrize("which", ["q", "k", "v"])
def test_causal_attention_loop_refuses_mixed_dtypes(which):
    """q float64 with k float32 failed inside torch.dot; v of another dtype was
    accepted."""
    args = {n: torch.randn(1, 3, 2, dtype=torch.float64) for n in "qkv"}
    args[which] = args[which].float()
    with pytest.raises(TypeError, match=r"^q, k and v must have the same dtype, got "
                                        r"q torch\.float\d+, k torch\.float\d+, v "):
        causal.causal_attention_loop(args["q"], args["k"], args["v"])


def test_causal_attention_loop_refuses_a_huge_int_scale():
    q = torch.randn(1, 2, 2, dtype=torch.float64)
    with pytest.raises(
            ValueError, match="scale must be a finite number, got an int too"):
        causal.causal_attention_loop(q, q, q, scale=10**400)
