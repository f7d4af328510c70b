"""Property tests of seqlearn.unroll names registered outside test_properties_attention.py."""

import torch
from hypothesis import given, strategies as st

from properties import F64, covers, numpy_of, randn, refuses, seeds
from seqlearn import unroll


@covers("seqlearn.unroll.notes_printed_weights")
@given(seed=seeds, T=st.integers(1, 6), H=st.integers(1, 3))
def test_notes_printed_weights_follow_the_printed_formula(seed, T, H):
    u = torch.sigmoid(randn(seed, T, H))
    printed = unroll.notes_printed_weights(u)
    for t in range(T):  # 0-based: prod_{j<=t-i} u_j * prod_{k<i} (1 - u_k)
        for i in range(T):
            want = (torch.prod(u[: t - i + 1], 0) * torch.prod(1 - u[:i], 0) if i <= t
                    else torch.zeros(H, dtype=F64))
            torch.testing.assert_close(printed[t, i], want)
    # wrong already at t = 1 (index 0) unless u_1 = 1/2: u_1 instead of 1 - u_1
    alpha = unroll.gru_implied_weights(u)[0]
    torch.testing.assert_close(printed[0, 0] - alpha[0, 0], 2 * u[0] - 1)
    refuses(unroll.notes_printed_weights, numpy_of(u))
