"""Property tests of the names added for the gated chapters (seqlearn.data.multi_recall)."""

import numpy as np
import torch
from hypothesis import given, strategies as st

from properties import covers, not_bools, refuses, seeds
from seqlearn.data import multi_recall


@covers("seqlearn.data.multi_recall.multi_recall_dataset",
        "seqlearn.data.multi_recall.multi_recall_vocab_size")
@given(seed=seeds, n=st.integers(1, 6), k=st.integers(1, 5), delay=st.integers(0, 6),
       K=st.integers(2, 5), M=st.integers(1, 3), flag=not_bools)
def test_label_is_the_symbol_at_the_cued_position(seed, n, k, delay, K, M, flag):
    rng = np.random.default_rng(seed)
    x, y = multi_recall.multi_recall_dataset(n, k, delay, rng, num_symbols=K, num_distractors=M)
    V = multi_recall.multi_recall_vocab_size(k, K, M)
    assert V == K + M + k and x.shape == (n, k + delay + 1, V)
    tokens = x.argmax(-1)
    cue = tokens[:, -1] - (K + M)
    assert ((cue >= 0) & (cue < k)).all()
    assert torch.equal(y, tokens[torch.arange(n), cue]) and (y < K).all()
    assert ((tokens[:, k:-1] >= K) & (tokens[:, k:-1] < K + M)).all()
    refuses(multi_recall.multi_recall_dataset, n, k, delay, rng, onehot=flag)
    refuses(multi_recall.multi_recall_dataset, n, 0, delay, rng)
    refuses(multi_recall.multi_recall_vocab_size, k, 1)
