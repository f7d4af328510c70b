"""A hand-built Elman RNN that counts brackets exactly with saturated tanh units (chapter :doc:`bptt`).

The weights are set by hand, not learned: they show that a plain Elman network of
:func:`seqlearn.bptt.rnn_forward` *can* represent the bracket task of
:mod:`seqlearn.data.brackets` for every length, whatever training finds.

Each unit is a binary switch ``s = (h + 1) / 2`` in ``{0, 1}`` (a saturated tanh, ``h = +-1``).
With the input one-hot ``x = (o, c, f)`` for ``(``, ``)`` and the filler ``x``:

* thermometer units ``s_j = [count >= j]``, ``j = 1 .. depth`` (``s_0 = 1``, ``s_{depth+1} = 0``).
  Because ``s_{j-1} >= s_j >= s_{j+1}``, one threshold per input reads the right neighbour::

      s_j <- [s_{j-1} + s_j + s_{j+1} - 0.5 o - 1.5 f - 2.5 c > 0]

  (``(`` copies ``s_{j-1}``, the filler keeps ``s_j``, ``)`` copies ``s_{j+1}``);
* an error latch ``e <- [2 e + c - s_1 - 0.5 > 0]``: a ``)`` read at count 0;
* an overflow latch ``v <- [2 v + o + s_depth - 1.5 > 0]``: a ``(`` read at count ``depth``.

The read-out ``score = 0.5 - s_1 - e - v`` is positive exactly when the string is balanced and
never deeper than ``depth``; the logits are ``(-score, score)`` times ``gain``. Every
pre-activation is ``gain`` times a half-integer, at least ``gain / 2`` in magnitude, and since
``1 - tanh(z) ~ 2 exp(-2 z)`` the states stay within about ``2 exp(-gain)`` of ``+-1`` (the
switches within about ``exp(-gain)`` of ``{0, 1}``) at every step. In the tanh variables
``h = 2 s - 1`` a weight matrix ``A`` acting on ``s`` becomes ``A / 2`` on ``h`` plus the bias
``A 1 / 2``; the initial state is ``h(-1) = -1`` (all switches off).
"""

from __future__ import annotations

import numpy as np

from seqlearn.validate import check_int, check_real
from seqlearn.bptt.params import Params

THRESHOLDS = (-0.5, -2.5, -1.5)   # thermometer: the input terms for "(", ")", "x"


def counter_params(depth: int, gain: float = 20.0) -> Params:
    """Parameters ``W1 (H, 3), W11 (H, H), b1, W2 (2, H), b2`` of the counter, ``H = depth + 2``.

    Units ``0 .. depth-1`` are the thermometer ``s_1 .. s_depth``, unit ``depth`` the error
    latch, unit ``depth + 1`` the overflow latch. Run it with
    ``rnn_forward(x, -np.ones((B, depth + 2)), params)`` on one-hot ``x (B, T, 3)``
    (:func:`seqlearn.data.encode_brackets`); ``y[:, -1].argmax(-1)`` is 1 for balanced.
    """
    n = check_int(depth, "depth")
    check_real(gain, "gain", positive=True)
    H = n + 2
    err, over = n, n + 1
    A = np.zeros((H, H))                      # acts on the switches s: (H, H)
    C = np.zeros((H, 3))                      # acts on the one-hot input (o, c, f): (H, 3)
    d = np.zeros(H)
    for j in range(n):                        # unit j holds s_{j+1} = [count >= j + 1]
        A[j, j] = 1.0
        if j > 0:
            A[j, j - 1] = 1.0                 # s_j (below)
        else:
            d[j] += 1.0                       # s_0 = 1
        if j < n - 1:
            A[j, j + 1] = 1.0                 # s_{j+2} (above); s_{depth+1} = 0
        C[j] = THRESHOLDS
    A[err, err], A[err, 0], C[err, 1], d[err] = 2.0, -1.0, 1.0, -0.5
    A[over, over], A[over, n - 1], C[over, 0], d[over] = 2.0, 1.0, 1.0, -1.5
    w = np.zeros(H)                           # score = 0.5 - s_1 - e - v
    w[[0, err, over]] = -1.0
    score_W, score_b = w / 2, 0.5 + w.sum() / 2    # on h = 2 s - 1
    return {"W1": gain * C, "W11": gain * A / 2, "b1": gain * (d + A.sum(axis=1) / 2),
            "W2": gain * np.stack([-score_W, score_W]),
            "b2": gain * np.array([-score_b, score_b])}
