"""seqlearn.bptt.reference: the torch copy of the hand-written network computes what it
does."""

from __future__ import annotations

import numpy as np

from seqlearn.bptt import init_params, rnn_backward, rnn_forward, torch_reference


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def test_torch_reference_for_the_single_layer_network():
    rng = np.random.default_rng(5)
    params = init_params(3, 4, 2, rng)
    x, h0 = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4))
    y, cache = rnn_forward(x, h0, params)
    dy = rng.standard_normal(y.shape)
    y_ref, expected = torch_reference(x, h0, params, dy)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12)
    for k, g in rnn_backward(dy, cache).items():
        assert rel_err(g, expected[k]) <= 1e-10, k
