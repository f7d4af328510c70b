"""seqlearn.complexity: Jacobian patterns of known layers, path lengths and sequential
steps against their closed forms, slopes of exact powers, saved memory of known
operations; properties at random sizes."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, strategies as st
from torch import nn

from properties import covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import complexity
from seqlearn.complexity import (fastest_times, graph_depth, jacobian_pattern,
                                 loglog_slope, max_path_length, op_input_elements,
                                 saved_tensor_bytes, sequential_steps)


F64 = torch.float64


def band(T, left, right):
    lag = torch.arange(T)[:, None] - torch.arange(T)  # t - s
    return (lag <= left) & (lag >= -right)


def test_jacobian_pattern_of_a_convolution_and_a_cumulative_sum():
    torch.manual_seed(0)
    conv = nn.Conv1d(3, 2, 5, padding=2).double()
    x = torch.randn(12, 3, dtype=F64)
    assert torch.equal(jacobian_pattern(lambda z: conv(z.T).T, x), band(12, 2, 2))
    assert torch.equal(jacobian_pattern(lambda z: z.cumsum(0), x), band(12, 11, 0))
    assert torch.equal(jacobian_pattern(lambda z: z[:4] * 0, x), torch.zeros(4, 12, dtype=torch.bool))


@pytest.mark.parametrize("T", [1, 2, 7, 16])
def test_path_lengths_of_bands_and_full_patterns(T):
    full = torch.ones(T, T, dtype=torch.bool)
    assert max_path_length([full]) == (1, 1)
    assert max_path_length([full.tril()], causal=True) == (1, 1)
    for r in (1, 2, 3):  # a band of radius r connects offsets up to r per layer
        L = max(1, math.ceil((T - 1) / r))
        assert max_path_length([band(T, r, r)]) == (L, L)
        assert max_path_length([band(T, r, 0)], causal=True) == (L, L)
    dilated = [band(T, 0, 0) | (torch.arange(T)[:, None] - torch.arange(T) == 2 ** j)
               for j in range(5)]  # kernel 2, dilation 2^j: lags 0 and 2^j
    L = max(1, math.ceil(math.log2(T)))
    assert max_path_length(dilated, causal=True) == (L, L)


@pytest.mark.parametrize("T", [1, 3, 10])
def test_a_recurrence_has_paths_of_length_T_in_one_layer(T):
    eye = torch.eye(T, dtype=torch.bool)
    chain = torch.diag(torch.ones(T - 1, dtype=torch.bool), -1)  # h_t reads h_{t-1}
    assert max_path_length([eye], within=chain, causal=True) == (1, T)
    assert sequential_steps(chain) == T
    assert sequential_steps(None) == 1
    assert sequential_steps(torch.zeros(T, T, dtype=torch.bool)) == 1


def test_sequential_steps_of_a_tree_and_a_cycle():
    within = torch.zeros(4, 4, dtype=torch.bool)
    within[1, 0] = within[2, 0] = within[3, 1] = within[3, 2] = True  # 0 -> {1, 2} -> 3
    assert sequential_steps(within) == 3
    with pytest.raises(ValueError, match="cycle"):
        sequential_steps(within | within.T)


def test_max_path_length_refuses_what_never_connects_and_bad_patterns():
    eye = torch.eye(4, dtype=torch.bool)
    with pytest.raises(ValueError, match="do not connect"):
        max_path_length([eye], max_layers=5)
    with pytest.raises(TypeError, match="bool"):
        max_path_length([eye.double()])
    with pytest.raises(ValueError, match="layers\\[1\\]"):
        max_path_length([eye, torch.eye(3, dtype=torch.bool)])
    with pytest.raises(TypeError, match="sequence"):
        max_path_length(eye)
    with pytest.raises(TypeError, match="causal"):
        max_path_length([eye], causal=1)


def test_loglog_slope_recovers_exponents():
    n = [16, 32, 64, 128]
    for p in (0.5, 1.0, 2.0, 3.0):
        assert loglog_slope(n, [7 * x ** p for x in n]) == pytest.approx(p, abs=1e-12)
    with pytest.raises(ValueError, match="positive"):
        loglog_slope([1, 2], [1, 0])
    with pytest.raises(ValueError, match="one length"):
        loglog_slope([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="two different"):
        loglog_slope([2, 2], [1, 3])


def test_saved_tensor_bytes_counts_each_storage_once():
    x = torch.randn(100, 10, requires_grad=True)
    assert saved_tensor_bytes(lambda: (x * x).sum()) == 100 * 10 * 4  # x saved twice, counted once
    assert saved_tensor_bytes(lambda: x.exp().sum()) == 100 * 10 * 4  # exp saves its result
    w = torch.randn(10, 20, requires_grad=True)
    assert saved_tensor_bytes(lambda: x @ w) == (100 * 10 + 10 * 20) * 4
    with torch.no_grad():
        assert saved_tensor_bytes(lambda: x @ w) == 0
    with pytest.raises(TypeError, match="callable"):
        saved_tensor_bytes(3)


def test_fastest_times_calls_every_function_on_every_input():
    calls = []
    times = fastest_times({"a": lambda x: calls.append(("a", x)),
                           "b": lambda x: calls.append(("b", x))}, [1, 2], repeats=3)
    assert sorted(times) == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert all(t >= 0 for t in times.values())
    assert calls[:4] == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]  # round-robin
    assert len(calls) == 4 * 4  # a warm-up round and three rounds
    with pytest.raises(TypeError, match="dict of callables"):
        fastest_times({"a": 1}, [1])
    with pytest.raises(ValueError, match="repeats"):
        fastest_times({"a": print}, [1], repeats=0)


def test_graph_depth_counts_the_longest_chain_of_operations():
    x = torch.randn(5, 3, dtype=F64)
    assert graph_depth(lambda z: z.exp(), x) == 1
    assert graph_depth(lambda z: z.exp().sin().sum(-1), x) == 3
    assert graph_depth(lambda z: z.exp() + z, x) == 2  # the longer of two branches
    w = torch.randn(3, dtype=F64, requires_grad=True)
    assert graph_depth(lambda z: (w.exp().exp().exp() * z).sum(), x) == 2  # w is not x
    h = torch.zeros(3, dtype=F64)

    def loop(z):  # a recurrence: each step waits for the one before
        state = h
        for row in z:
            state = torch.tanh(state + row)
        return state

    assert [graph_depth(loop, torch.randn(T, 3, dtype=F64)) for T in (1, 4, 9)] == [3, 9, 19]  # unbind, then add and tanh per step
    with pytest.raises(ValueError, match="does not depend on x"):
        graph_depth(lambda z: w * 2, x)
    with pytest.raises(ValueError, match="does not depend on x"):
        graph_depth(lambda z: z.detach() * 2, x)
    with pytest.raises(TypeError, match="callable"):
        graph_depth(None, x)


def test_op_input_elements_counts_what_each_operation_reads():
    s = torch.randn(6, 7)
    assert op_input_elements(lambda z: torch.softmax(z, -1), s) == {"_softmax": 42}
    counts = op_input_elements(lambda a, b: (a @ b).exp() + a @ b, s, s.T)
    assert counts["mm"] == 2 * 42 and counts["exp"] == 36 and counts["add"] == 36
    with pytest.raises(TypeError, match="callable"):
        op_input_elements(3)


# ---------------------------------------------- properties at random sizes (hypothesis)


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


@pytest.mark.parametrize("fn", [lambda x: torch.zeros(3, 2),
                                lambda x: 2 * x.detach()[:3]])
def test_jacobian_pattern_of_an_output_independent_of_x_is_all_false(fn):
    """It crashed in autograd instead of returning the pattern its docstring defines
    (issue 31)."""
    p = jacobian_pattern(fn, torch.randn(4, 2))
    assert p.dtype == torch.bool and p.shape == (3, 4) and not p.any()
