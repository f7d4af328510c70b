"""Property tests of the concatenated scores: the stacked pairs and v^T tanh(W [q; k]) against a
loop over pairs, the additive form with the same weights, and bad input."""

import torch
from hypothesis import given

from properties import F64, covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import scores


@covers("seqlearn.scores.concat_pairs", "seqlearn.scores.ConcatScore")
@given(seed=seeds, B=sizes, Tq=sizes, Tk=sizes, dq=sizes, dk=sizes, h=sizes, flag=not_bools)
def test_concat_score_equals_the_pair_loop_and_the_additive_form(seed, B, Tq, Tk, dq, dk, h,
                                                                 flag):
    torch.manual_seed(seed)
    q, k = randn(seed, B, Tq, dq), randn(seed + 1, B, Tk, dk)
    stacked = scores.concat_pairs(q, k)  # (B, Tq, Tk, dq + dk)
    concat = scores.ConcatScore(dq, dk, h, bias=bool(seed % 2)).double()
    b = concat.W.bias if concat.W.bias is not None else torch.zeros(h, dtype=F64)
    want = torch.zeros(B, Tq, Tk, dtype=F64)
    for n in range(B):
        for t in range(Tq):
            for i in range(Tk):
                pair = torch.cat([q[n, t], k[n, i]])
                torch.testing.assert_close(stacked[n, t, i], pair, rtol=0, atol=0)
                want[n, t, i] = concat.v.weight[0] @ torch.tanh(concat.W.weight @ pair + b)
    torch.testing.assert_close(concat(q, k), want)
    torch.testing.assert_close(scores.AdditiveScore.from_concat(concat)(q, k), want)
    refuses(scores.ConcatScore, dq, dk, h, bias=flag)
    refuses(scores.ConcatScore, dq, dk, 0)
    refuses(concat, q, randn(seed, B, Tk, dk + 1))
    refuses(concat, q.float(), k)
    refuses(scores.concat_pairs, numpy_of(q), k)
    refuses(scores.concat_pairs, q, randn(seed, B + 1, Tk, dk))
    refuses(scores.AdditiveScore.from_concat, scores.MLPScore(dq, dk))
