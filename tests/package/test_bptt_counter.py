"""seqlearn.bptt.counter: the hand-built bracket counter is exact and saturated."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from seqlearn.bptt import counter_params, hidden_jacobians, rnn_forward
from seqlearn.data import bracket_strings, encode_brackets, is_balanced, nesting_depth


def decide(strings, depth, gain=20.0):
    x = encode_brackets(strings, dtype=torch.float64).numpy()
    y, cache = rnn_forward(x, -np.ones((len(strings), depth + 2)), counter_params(depth, gain))
    return y[:, -1].argmax(-1) == 1, cache


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("length", [1, 2, 5, 8])
def test_exact_on_every_short_string(depth, length):
    strings = ["".join(s) for s in itertools.product("()x", repeat=length)]
    got, cache = decide(strings, depth)
    truth = np.array([is_balanced(s) and nesting_depth(s) <= depth for s in strings])
    np.testing.assert_array_equal(got, truth)
    assert np.abs(np.abs(cache["h"]) - 1).max() < 1e-8


@pytest.mark.parametrize("depth", [2, 4])
def test_exact_on_long_hard_negatives(depth):
    rng = np.random.default_rng(depth)
    strings, labels = bracket_strings(300, 200, rng, max_depth=depth, fill=0.3)
    got, cache = decide(strings, depth, gain=15.0)
    np.testing.assert_array_equal(got, labels == 1)
    assert np.linalg.norm(hidden_jacobians(cache)[:, 2:], axis=(2, 3)).max() < 1e-5


def test_shapes_units_and_scaling():
    p, q = counter_params(3), counter_params(3, gain=10.0)
    assert {k: v.shape for k, v in p.items()} == {"W1": (5, 3), "W11": (5, 5), "b1": (5,),
                                                  "W2": (2, 5), "b2": (2,)}
    for k in p:
        np.testing.assert_allclose(p[k], 2 * q[k], rtol=1e-15)
    np.testing.assert_array_equal(p["W2"][0], -p["W2"][1])      # logits (-score, score)
    # the thermometer is tridiagonal, the latches read s_1 and s_depth
    A = 2 * q["W11"] / 10.0
    np.testing.assert_array_equal(A[:3, :3], [[1, 1, 0], [1, 1, 1], [0, 1, 1]])
    np.testing.assert_array_equal(A[3], [-1, 0, 0, 2, 0])
    np.testing.assert_array_equal(A[4], [0, 0, 1, 0, 2])


def test_overflow_and_underflow_latches():
    got, _ = decide(["((()))", "xx(())", "x)(xxx", "()x)((", "((xxxx", "xxxxxx"], 2)
    np.testing.assert_array_equal(got, [False, True, False, False, False, True])


def test_validation():
    with pytest.raises(ValueError, match="depth must be positive, got 0"):
        counter_params(0)
    with pytest.raises(TypeError, match="depth must be an int"):
        counter_params(2.0)
    with pytest.raises(ValueError, match="gain must be positive"):
        counter_params(2, gain=0.0)
