"""seqlearn.bptt (params, lstm, counter): exact parameters, bounds and the wording of each error.

These tests close the gaps that mutation testing (``tools/mutation.py package``) found in the
tests of the NumPy BPTT modules: the hand-built counter's exact weights, the largest allowed
number of layers, and which argument each dtype or shape error names.
"""

from __future__ import annotations

import numpy as np
import pytest

from seqlearn.bptt import counter_params, init_params, param_names, rnn_forward
from seqlearn.bptt.lstm import BASE_KEYS, PEEPHOLES, lstm_forward, sigmoid
from seqlearn.bptt.params import MAX_LAYERS

RNG = np.random.default_rng(0)


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


def test_param_names_accepts_max_layers_and_refuses_one_more():
    names = param_names(MAX_LAYERS)
    assert len(names) == 3 * MAX_LAYERS + 2 and names[-2:] == ["W10", "b10"]
    with pytest.raises(ValueError, match=r"^num_layers must be an int in 1\.\.9, got 10$"):
        param_names(MAX_LAYERS + 1)


def _rnn_args(dtype_of=None, shape_of=None, shape=None):
    x, h0 = RNG.standard_normal((2, 3, 4)), np.zeros((2, 5))
    p = init_params(4, 5, 3, np.random.default_rng(1))
    if dtype_of is not None:
        p[dtype_of] = p[dtype_of].astype(np.float32)
    if shape_of is not None:
        p[shape_of] = np.zeros(shape)
    return x, h0, p


@pytest.mark.parametrize("key", ["W1", "W11", "b1", "W2", "b2"])
def test_rnn_params_must_have_the_dtype_of_x(key):
    with pytest.raises(TypeError, match=rf"^{key} and x must have the same dtype, got float32 "
                                        r"and float64$"):
        rnn_forward(*_rnn_args(dtype_of=key))


@pytest.mark.parametrize("key, shape, match", [
    ("W11", (6, 6), r"^W11 must have shape \(H=5, H=5\), got \(6, 6\)$"),
    ("b1", (6,), r"^b1 must have shape \(H=5\), got \(6,\)$"),
    ("W2", (3, 6), r"^W2 must have shape \(O, K=5\), got \(3, 6\)$"),
    ("b2", (4,), r"^b2 must have shape \(O=3\), got \(4,\) \(O as in W2\)$"),
])
def test_rnn_params_shapes_name_the_parameter(key, shape, match):
    with pytest.raises(ValueError, match=match):
        rnn_forward(*_rnn_args(shape_of=key, shape=shape))


def test_init_params_names_orthogonal():
    with pytest.raises(TypeError, match=r"^orthogonal must be a bool, got int 1$"):
        init_params(2, 3, 1, np.random.default_rng(0), orthogonal=1)


def test_sigmoid_names_its_argument():
    with pytest.raises(TypeError, match=r"^a must be a floating-point array, got dtype int64$"):
        sigmoid(np.array([1, 2], dtype=np.int64))


def _lstm_params(H=3, D=2, peephole=False, dtype=np.float64):
    rng = np.random.default_rng(2)
    keys = BASE_KEYS + (PEEPHOLES if peephole else ())
    shape = lambda k: (H, D) if k.startswith("W_x") else (H,) if k.startswith("b_") else (H, H)
    return {k: rng.standard_normal(shape(k)).astype(dtype) for k in keys}


def test_lstm_peepholes_alone_are_missing_the_base_keys():
    x, h0 = RNG.standard_normal((1, 2, 2)), np.zeros((1, 3))
    only = {k: np.zeros((3, 3)) for k in PEEPHOLES}
    with pytest.raises(ValueError, match=r"^params must have keys \['W_xi', .*missing "
                                         r"\['W_xi', 'W_hi', 'b_i', .*'b_c'\], unexpected \[\]$"):
        lstm_forward(x, h0, h0, only)


def test_lstm_bias_shape_and_dtype_are_checked():
    x, h0 = RNG.standard_normal((1, 2, 2)), np.zeros((1, 3))
    p = _lstm_params()
    p["b_f"] = np.zeros(4)
    with pytest.raises(ValueError, match=r"^params\['b_f'\] must have shape \(H=3\), got \(4,\)$"):
        lstm_forward(x, h0, h0, p)
    p = _lstm_params()
    p["W_hi"] = p["W_hi"].astype(np.float32)
    with pytest.raises(TypeError, match=r"^params\['W_hi'\] and x must have the same dtype, "
                                        r"got float32 and float64$"):
        lstm_forward(x, h0, h0, p)
