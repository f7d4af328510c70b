"""seqlearn.table1: each layer type against its torch definition, and the measured
columns of Table 1 against their closed forms at small lengths; properties at random
sizes."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, strategies as st
from torch.utils.flop_counter import FlopCounterMode

from properties import F64, covers, randn, refuses, seeds
from seqlearn import complexity, table1
from seqlearn.attention import attention
from seqlearn.complexity import (graph_depth, loglog_slope, max_path_length,
                                 sequential_steps)
from seqlearn.table1 import KINDS, PAPER, PAPER_ROW, dependency_patterns, layer


def flops(fn, n, d):
    with FlopCounterMode(display=False) as counter:
        fn(torch.randn(1, n, d))
    return counter.get_total_flops()


def test_layers_keep_the_shape_and_count_the_papers_flops():
    torch.manual_seed(0)
    n = [64, 128, 256]
    slopes = {kind: loglog_slope(n, [flops(layer(kind, 16), m, 16) for m in n]) for kind in KINDS}
    assert slopes["self-attention"] == pytest.approx(2.0)
    for kind in KINDS[1:]:
        assert slopes[kind] == pytest.approx(1.0), kind
    assert flops(layer("self-attention", 16), 64, 16) == 4 * 64 * 64 * 16  # QK^T and AV
    assert flops(layer("convolutional", 16, kernel=5), 64, 16) == 2 * 5 * 64 * 16 * 16
    for kind in KINDS:
        assert layer(kind, 8)(torch.randn(2, 11, 8)).shape == (2, 11, 8)


def test_convolution_is_causal_and_attention_is_attention():
    torch.manual_seed(1)
    x = torch.randn(1, 12, 4, dtype=torch.float64)
    conv = layer("dilated convolutional", 4, kernel=2, dilation=4, dtype=torch.float64)
    y = conv(x)
    x2 = x.clone()
    x2[:, 7:] += 1  # changing inputs from 7 on leaves outputs 0..6 alone
    torch.testing.assert_close(conv(x2)[:, :7], y[:, :7])
    assert not torch.allclose(conv(x2)[:, 7:], y[:, 7:])
    torch.testing.assert_close(layer("self-attention", 4)(x), attention(x, x, x)[0])
    gru = layer("recurrent", 4, dtype=torch.float64)
    assert gru(x).shape == x.shape


@pytest.mark.parametrize("T", [2, 5, 9, 16])
def test_measured_path_lengths_and_sequential_steps(T):
    want = {
        "self-attention": (1, 1),
        "recurrent": (T, T),
        "convolutional": (math.ceil((T - 1) / 2), 1),  # kernel 3: two more positions per layer
        "dilated convolutional": (math.ceil(math.log(T, 3) - 1e-12), 1),
        "restricted self-attention": (math.ceil((T - 1) / 4), 1),  # radius 4
    }
    for kind in KINDS:
        layers, within, causal = dependency_patterns(kind, T, d=3)
        assert max_path_length(layers, within=within, causal=causal)[1] == want[kind][0], kind
        assert sequential_steps(within) == want[kind][1], kind


def test_the_papers_table_has_four_rows_and_one_convolutional_row():
    assert list(PAPER) == ["Self-Attention", "Recurrent", "Convolutional",
                           "Self-Attention (restricted)"]
    assert all(len(row) == 3 for row in PAPER.values())
    assert PAPER["Convolutional"][2] == "O(log_k(n))"
    assert set(PAPER_ROW) == set(KINDS) and set(PAPER_ROW.values()) == set(PAPER)


def test_sequential_operations_read_off_the_running_layers():
    torch.manual_seed(2)
    n = [4, 8, 16]
    for kind in KINDS:
        f = layer(kind, 3, dtype=torch.float64)
        depth = [graph_depth(f, torch.randn(1, m, 3, dtype=torch.float64)) for m in n]
        if kind == "recurrent":  # the same operations once per step: depth a n + b, a >= 1
            assert depth[2] - depth[1] == 2 * (depth[1] - depth[0]) > 0
        else:
            assert depth[0] == depth[1] == depth[2], kind


def test_refuses_unknown_kinds_and_sizes():
    with pytest.raises(ValueError, match="kind"):
        layer("transformer", 4)
    with pytest.raises(ValueError, match="kernel"):
        layer("convolutional", 4, kernel=1)
    with pytest.raises(TypeError, match="d must be an int"):
        dependency_patterns("recurrent", 4, d=2.0)
    with pytest.raises(ValueError, match="T must be positive"):
        dependency_patterns("self-attention", 0)


# ---------------------------------------------- properties at random sizes (hypothesis)


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
