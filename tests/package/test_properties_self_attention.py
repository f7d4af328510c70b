"""Property tests of online_softmax, local_attention, complexity, table1, long_range, saturation."""

import math

import torch
from hypothesis import given, strategies as st

from properties import F64, covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import attention as att, complexity, long_range, online_softmax, saturation, table1
from seqlearn import local_attention as ra


@covers("seqlearn.online_softmax.memory_efficient_attention",
        "seqlearn.online_softmax.online_normalizer")
@given(seed=seeds, B=sizes, Tq=sizes, Tk=sizes, d=sizes, block=sizes, flag=not_bools)
def test_blocked_attention_equals_attention(seed, B, Tq, Tk, d, block, flag):
    q, k, v = randn(seed, B, Tq, d), randn(seed + 1, B, Tk, d), randn(seed + 2, B, Tk, 2)
    lengths = torch.randint(0, Tk + 1, (B,), generator=torch.Generator().manual_seed(seed))
    mask = att.padding_mask(lengths, Tk)[:, None, :]
    for causal in (False, True):
        want = att.attention(q, k, v, mask=mask, causal=causal)[0]
        got = online_softmax.memory_efficient_attention(q, k, v, mask=mask, causal=causal,
                                                        block_size=block)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    s = q @ k.transpose(-2, -1)
    m, l = online_softmax.online_normalizer(s, block)
    torch.testing.assert_close(m + l.log(), torch.logsumexp(s, -1))
    refuses(online_softmax.memory_efficient_attention, q, k, v, causal=flag)
    refuses(online_softmax.memory_efficient_attention, q, k, v, block_size=0)
    refuses(online_softmax.memory_efficient_attention, q, k, v, mask=mask.double())
    refuses(online_softmax.memory_efficient_attention, numpy_of(q), k, v)
    refuses(online_softmax.online_normalizer, s, -block)
    refuses(online_softmax.online_normalizer, s + math.nan, block)


@covers("seqlearn.local_attention.restricted_attention",
        "seqlearn.local_attention.band_mask")
@given(seed=seeds, B=sizes, T=sizes, d=sizes, radius=st.integers(0, 5), flag=not_bools)
def test_restricted_attention_equals_banded_attention(seed, B, T, d, radius, flag):
    q, k, v = randn(seed, B, T, d), randn(seed + 1, B, T, d), randn(seed + 2, B, T, 3)
    for causal in (False, True):
        mask = ra.band_mask(T, radius, causal=causal)
        lag = torch.arange(T)[:, None] - torch.arange(T)
        assert torch.equal(mask, (lag.abs() <= radius) & ((lag >= 0) | (not causal)))
        torch.testing.assert_close(ra.restricted_attention(q, k, v, radius, causal=causal),
                                   att.attention(q, k, v, mask=mask)[0])
    refuses(ra.restricted_attention, q, k, v, radius, causal=flag)
    refuses(ra.restricted_attention, q, k, v, -1 - radius)
    refuses(ra.band_mask, T, radius, causal=flag)
    refuses(ra.restricted_attention, q, k, v[..., :1, :] if T > 1 else v[..., :0, :], radius)


@covers("seqlearn.complexity.jacobian_pattern", "seqlearn.complexity.max_path_length",
        "seqlearn.complexity.sequential_steps", "seqlearn.complexity.loglog_slope",
        "seqlearn.complexity.saved_tensor_bytes", "seqlearn.complexity.fastest_times")
@given(seed=seeds, T=st.integers(2, 9), radius=st.integers(1, 3), p=st.floats(0.25, 3.0),
       flag=not_bools)
def test_path_lengths_of_banded_layers(seed, T, radius, p, flag):
    x = randn(seed, T, 2)
    w = randn(seed + 1, 2 * radius + 1)
    conv = lambda z: torch.nn.functional.conv1d(z.T[:, None], w[None, None], padding=radius)[:, 0].T
    pattern = complexity.jacobian_pattern(conv, x)
    lag = torch.arange(T)[:, None] - torch.arange(T)
    assert torch.equal(pattern, lag.abs() <= radius)  # brute force: the kernel's reach
    layers = math.ceil((T - 1) / radius)
    assert complexity.max_path_length([pattern]) == (layers, layers)
    chain = lag == 1
    assert complexity.max_path_length([lag == 0], within=chain, causal=True) == (1, T)
    assert complexity.sequential_steps(chain) == T and complexity.sequential_steps(None) == 1
    n = [2.0, 4.0, 8.0, 32.0]
    assert abs(complexity.loglog_slope(n, [3 * v ** p for v in n]) - p) < 1e-9
    y = x.clone().requires_grad_(True)
    assert complexity.saved_tensor_bytes(lambda: y.exp()) == y.numel() * 8
    refuses(complexity.max_path_length, [pattern.double()])
    refuses(complexity.max_path_length, [pattern], causal=flag)
    refuses(complexity.max_path_length, [lag == 0], max_layers=1)
    refuses(complexity.sequential_steps, chain | chain.T)
    refuses(complexity.loglog_slope, n, [-1.0] * 4)
    refuses(complexity.jacobian_pattern, conv, numpy_of(x))
    refuses(complexity.saved_tensor_bytes, None)
    seen = []
    times = complexity.fastest_times({"f": seen.append}, [radius, T], repeats=2)
    assert seen == [radius, T] * 3 and sorted(times) == [("f", 0), ("f", 1)]
    refuses(complexity.fastest_times, {"f": None}, [1])


@covers("seqlearn.complexity.graph_depth", "seqlearn.complexity.op_input_elements")
@given(seed=seeds, T=st.integers(1, 6), d=sizes, ops=st.integers(1, 4))
def test_graph_depth_and_element_counts_of_loops_and_chains(seed, T, d, ops):
    x = randn(seed, T, d)

    def chain(z):  # `ops` elementwise operations one after another
        for _ in range(ops):
            z = torch.sin(z)
        return z

    def recurrence(z):  # brute force: one add and one tanh per step, after one unbind
        state = torch.zeros(d, dtype=F64)
        for row in z:
            state = torch.tanh(state + row)
        return state

    assert complexity.graph_depth(chain, x) == ops
    assert complexity.graph_depth(recurrence, x) == 2 * T + 1
    assert complexity.op_input_elements(chain, x) == {"sin": ops * T * d}
    s = randn(seed + 1, T, T)
    assert complexity.op_input_elements(lambda z: z.softmax(-1), s) == {"_softmax": T * T}
    refuses(complexity.graph_depth, lambda z: z.detach(), x)
    refuses(complexity.graph_depth, chain, numpy_of(x))
    refuses(complexity.op_input_elements, None)


@covers("seqlearn.table1.layer", "seqlearn.table1.dependency_patterns")
@given(seed=seeds, T=st.integers(1, 7), d=st.integers(1, 3), kernel=st.integers(2, 4),
       kind=st.sampled_from(table1.KINDS))
def test_table1_layers_and_their_path_lengths(seed, T, d, kernel, kind):
    torch.manual_seed(seed)
    x = randn(seed, 2, T, d)
    y = table1.layer(kind, d, kernel=kernel, radius=1, dtype=F64)(x)
    assert y.shape == x.shape
    if kind != "recurrent":  # reference: the same layer applied to each sequence alone
        f = table1.layer(kind, d, kernel=kernel, radius=1, dtype=F64)
        torch.testing.assert_close(f(x), torch.cat([f(x[:1]), f(x[1:])]))
    layers, within, causal = table1.dependency_patterns(kind, T, d=d, kernel=kernel, radius=1,
                                                        seed=seed)
    steps, longest = complexity.max_path_length(layers, within=within, causal=causal)
    want = {"self-attention": 1, "recurrent": T, "restricted self-attention": T - 1,
            "convolutional": math.ceil((T - 1) / (kernel - 1)),
            "dilated convolutional": next(L for L in range(T + 1) if kernel ** L >= T)}[kind]
    assert longest == max(1, want)
    refuses(table1.layer, kind.upper(), d)
    refuses(table1.layer, kind, d, kernel=1)
    refuses(table1.dependency_patterns, kind, T, d=0)


@covers("seqlearn.long_range.recall_batch", "seqlearn.long_range.LastStepReader",
        "seqlearn.long_range.input_gradient_norms")
@given(seed=seeds, B=sizes, T=sizes, vocab=st.integers(2, 5), kind=st.sampled_from(["rnn", "attention"]))
def test_recall_readers_and_input_gradients(seed, B, T, vocab, kind):
    tokens, target = long_range.recall_batch(B, T, vocab, torch.Generator().manual_seed(seed))
    assert torch.equal(target, tokens[:, 0])
    torch.manual_seed(seed)
    model = long_range.LastStepReader(kind, vocab, 3, T, hidden=4).double()
    logits = model(tokens)
    assert logits.shape == (B, vocab)
    e = model.embed(tokens).detach().requires_grad_(True)  # reference: autograd per position
    torch.nn.functional.cross_entropy(model(tokens, e), target, reduction="sum").backward()
    torch.testing.assert_close(long_range.input_gradient_norms(model, tokens, target),
                               e.grad.norm(dim=-1).mean(0))
    refuses(long_range.recall_batch, B, T, vocab, seed)
    refuses(long_range.LastStepReader, kind.upper(), vocab, 3, T)
    refuses(model, tokens[:, :0] if T > 1 else tokens.float())
    refuses(long_range.input_gradient_norms, model, tokens, target + vocab)


@covers("seqlearn.saturation.softmax_saturation")
@given(seed=seeds, B=sizes, n=st.integers(1, 6), scale=st.floats(0.0, 30.0))
def test_softmax_saturation_equals_its_definitions(seed, B, n, scale):
    scores = scale * randn(seed, B, n)
    top, entropy, norm = saturation.softmax_saturation(scores)
    for b in range(B):
        alpha = torch.softmax(scores[b], 0)
        J = torch.diag(alpha) - torch.outer(alpha, alpha)  # reference: the Jacobian itself
        torch.testing.assert_close(norm[b], J.norm())
        torch.testing.assert_close(top[b], alpha.max())
        torch.testing.assert_close(entropy[b], -(alpha * alpha.clamp_min(1e-300).log()).sum())
    refuses(saturation.softmax_saturation, numpy_of(scores))
    refuses(saturation.softmax_saturation, scores + math.nan)
    refuses(saturation.softmax_saturation, scores[:, :0])
