"""seqlearn.copy_task: the copy task's layout, its loss and error count, and the LSTM
baseline, at random sizes."""

import numpy as np
import torch
from hypothesis import given, strategies as st

from properties import F64, covers, refuses, seeds, sizes
from seqlearn import copy_task


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.copy_task.copy_batch", "seqlearn.copy_task.CopyBatch",
        "seqlearn.copy_task.LSTMCopier", "seqlearn.copy_task.copy_loss",
        "seqlearn.copy_task.copy_errors")
@given(seed=seeds, n=sizes, length=st.integers(1, 5), width=sizes, hidden=sizes)
def test_copy_task_layout_loss_and_errors(seed, n, length, width, hidden):
    batch = copy_task.copy_batch(n, length, width, np.random.default_rng(seed),
                                 dtype=F64)
    assert isinstance(batch, copy_task.CopyBatch)
    x, y = batch
    assert x.shape == (n, 2 * length + 1, width + 1) and y.shape == (n, length, width)
    torch.testing.assert_close(x[:, :length, :width], y)
    assert x[:, length, width].eq(1).all() and x[:, length, :width].eq(0).all()
    assert x[:, length + 1:].eq(0).all() and x[:, :length, width].eq(0).all()
    again = copy_task.copy_batch(n, length, width, np.random.default_rng(seed),
                                 dtype=F64)
    assert torch.equal(again.x, x)
    torch.manual_seed(seed % 1000)
    model = copy_task.LSTMCopier(width, hidden).double()
    reference = torch.nn.LSTM(width + 1, hidden, batch_first=True).double()
    reference.load_state_dict(model.lstm.state_dict())
    logits, _ = model(x)
    torch.testing.assert_close(logits, model.output(reference(x)[0]))
    out = logits[:, length + 1:]
    p = torch.sigmoid(out)
    bce = -(y * torch.log(p) + (1 - y) * torch.log(1 - p))
    torch.testing.assert_close(copy_task.copy_loss(model, batch), bce.mean())
    errors = copy_task.copy_errors(model, batch)
    want = [sum(int((out[b, t, j] > 0) != (y[b, t, j] > 0.5)) for t in range(length)
                for j in range(width)) for b in range(n)]
    assert errors.tolist() == want and model.training
    refuses(copy_task.copy_batch, n, 0, width, np.random.default_rng(seed))
    refuses(copy_task.copy_batch, n, length, width, seed)
    refuses(copy_task.copy_loss, model, (x, y))
    refuses(copy_task.copy_loss, model, copy_task.CopyBatch(x[:, 1:], y))
    refuses(copy_task.LSTMCopier, width, 0)
