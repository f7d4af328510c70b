"""seqlearn.bptt.counter: the hand-built bracket counter is exact and saturated, with
the documented switch network."""

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


# ------------------------------- exact parameters, bounds and the wording of each error


# The hand-built counter's exact weights, the largest allowed number of layers, and
# which argument each dtype or shape error names.


def test_counter_params_are_the_documented_switch_network():
    # depth 2: units s_1, s_2, e, v; A acts on the switches s, C on the one-hot (o, c, f)
    A = np.array([[1.0, 1.0, 0.0, 0.0],     # s_1 <- s_0 + s_1 + s_2
                  [1.0, 1.0, 0.0, 0.0],     # s_2 <- s_1 + s_2 + s_3 (s_3 = 0: nothing above)
                  [-1.0, 0.0, 2.0, 0.0],    # e <- 2 e + c - s_1 - 0.5
                  [0.0, 1.0, 0.0, 2.0]])    # v <- 2 v + o + s_2 - 1.5
    C = np.array([[-0.5, -2.5, -1.5], [-0.5, -2.5, -1.5], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    d = np.array([1.0, 0.0, -0.5, -1.5])
    w = np.array([-1.0, 0.0, -1.0, -1.0])  # score = 0.5 - s_1 - e - v
    gain = 2.0
    p = counter_params(2, gain)
    np.testing.assert_array_equal(p["W1"], gain * C)
    np.testing.assert_array_equal(p["W11"], gain * A / 2)
    np.testing.assert_array_equal(p["b1"], gain * (d + A.sum(axis=1) / 2))
    np.testing.assert_array_equal(p["W2"], gain * np.stack([-w / 2, w / 2]))
    np.testing.assert_array_equal(p["b2"], gain * np.array([1.0, -1.0]))  # score_b = -1
