"""Property tests of seqlearn.layernorm, seqlearn.transformer_layers, seqlearn.transformer and
seqlearn.warmup: random sizes against torch.nn with copied weights, and bad input refused."""

import math

import numpy as np
import torch
from hypothesis import given, strategies as st
from torch import nn

from properties import F64, covers, not_bools, numpy_of, randn, refuses, seeds, sizes
from seqlearn import layernorm, transformer, transformer_layers as layers, warmup
from seqlearn.data import Vocab, seq2seq_batch
from seqlearn.seq2seq import exact_match

SRC, TGT = Vocab("abcd"), Vocab("xy")


@covers("seqlearn.layernorm.LayerNorm", "seqlearn.transformer_layers.FeedForward")
@given(seed=seeds, B=sizes, T=sizes, d=st.integers(1, 6), eps=st.sampled_from([1e-5, 0.1]))
def test_layernorm_and_feed_forward_equal_torch(seed, B, T, d, eps):
    torch.manual_seed(seed)
    ref = nn.LayerNorm(d, eps=eps, dtype=F64)
    nn.init.normal_(ref.weight)
    nn.init.normal_(ref.bias)
    x = randn(seed, B, T, d) * 2 + 1
    torch.testing.assert_close(layernorm.LayerNorm.from_torch(ref)(x), ref(x))
    ff = layers.FeedForward(d, 3).double()
    hidden = torch.relu(x @ ff.linear1.weight.T + ff.linear1.bias)
    torch.testing.assert_close(ff(x), hidden @ ff.linear2.weight.T + ff.linear2.bias)
    refuses(layernorm.LayerNorm, d, eps=-eps)
    refuses(layernorm.LayerNorm(d).double(), x[..., :0] if d > 1 else x.expand(B, T, 2))
    refuses(layernorm.LayerNorm(d), x)  # float32 module, float64 input
    refuses(ff, numpy_of(x))
    refuses(layers.FeedForward, d, 3, "sigmoid")


@covers("seqlearn.transformer_layers.EncoderLayer", "seqlearn.transformer_layers.DecoderLayer")
@given(seed=seeds, B=sizes, S=sizes, T=sizes, heads=st.integers(1, 2),
       norm_first=st.booleans(), flag=not_bools)
def test_layers_equal_torch_with_copied_weights(seed, B, S, T, heads, norm_first, flag):
    torch.manual_seed(seed)
    d = 2 * heads
    kwargs = dict(dropout=0.0, batch_first=True, norm_first=norm_first, dtype=F64)
    enc_ref = nn.TransformerEncoderLayer(d, heads, 3, **kwargs)
    dec_ref = nn.TransformerDecoderLayer(d, heads, 3, **kwargs)
    enc = layers.EncoderLayer.from_torch(enc_ref)
    dec = layers.DecoderLayer.from_torch(dec_ref)
    x, y = randn(seed, B, S, d), randn(seed + 1, B, T, d)
    lengths = torch.randint(1, S + 1, (B,), generator=torch.Generator().manual_seed(seed))
    mask = torch.arange(S) < lengths[:, None]  # (B, S), at least one token per row
    memory = enc(x, mask=mask)
    torch.testing.assert_close(memory, enc_ref(x, src_key_padding_mask=~mask))
    causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=F64)
    torch.testing.assert_close(dec(y, memory, memory_mask=mask),
                               dec_ref(y, memory, tgt_mask=causal, tgt_is_causal=True,
                                       memory_key_padding_mask=~mask))
    refuses(layers.EncoderLayer, d, heads, 3, norm_first=flag)
    refuses(enc, x, mask=mask.double())
    refuses(enc, x, mask=torch.zeros_like(mask))
    refuses(dec, y, memory[..., :1] if d > 1 else memory.expand(B, S, 2))
    refuses(layers.EncoderLayer.from_torch, dec_ref)


@covers("seqlearn.transformer.Transformer", "seqlearn.transformer.transformer_loss",
        "seqlearn.transformer.decoded_exact_match")
@given(seed=seeds, n=st.integers(1, 4), norm_first=st.booleans(), tie=st.booleans(),
       flag=not_bools)
def test_transformer_greedy_output_is_its_own_teacher_forced_argmax(seed, n, norm_first, tie,
                                                                    flag):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = transformer.Transformer(SRC, TGT, 4, 2, 1, 6, norm_first=norm_first,
                                    max_len=12, tie_weights=tie).double()
    pairs = [("".join(rng.choice(list("abcd"), rng.integers(1, 5))),
              "".join(rng.choice(list("xy"), rng.integers(0, 4)))) for _ in range(n)]
    batch = seq2seq_batch(pairs, SRC, TGT)
    tokens = model.greedy_decode(batch.src, 6, TGT.bos, TGT.eos, src_mask=batch.src_mask)
    fed = torch.cat([torch.full((n, 1), TGT.bos), tokens[:, :-1]], 1)
    argmax = model(batch.src, fed, src_mask=batch.src_mask).argmax(-1)  # (n, L)
    done = ((tokens == TGT.eos).long().cumsum(1) - (tokens == TGT.eos).long()) > 0
    assert torch.equal(argmax[~done], tokens[~done])  # up to and with each row's <eos>
    assert bool((tokens[done] == TGT.pad).all())
    loss = transformer.transformer_loss(model, batch)
    assert math.isfinite(loss.item()) and loss.item() > 0
    assert torch.equal(transformer.decoded_exact_match(model, batch, TGT),
                       exact_match(model.greedy_decode(batch.src, batch.tgt_out.shape[1],
                                                       TGT.bos, TGT.eos,
                                                       src_mask=batch.src_mask),
                                   batch.tgt_out, TGT.eos))
    refuses(transformer.Transformer, SRC, TGT, 4, 2, 1, 6, norm_first=flag)
    refuses(transformer.Transformer, SRC, TGT, 4, 3, 1, 6)  # 4 not divisible by 3 heads
    refuses(model, batch.src.double(), batch.tgt_in)
    refuses(model.greedy_decode, batch.src, 12, TGT.bos, TGT.eos)  # max_len - 1 = 11 at most
    refuses(transformer.decoded_exact_match, model, batch, "xy")


@covers("seqlearn.warmup.adam_moments")
@given(seed=seeds, N=st.integers(1, 6), P=st.integers(1, 5), b1=st.floats(0.0, 0.95),
       b2=st.floats(0.5, 0.999))
def test_adam_moments_are_the_bias_corrected_averages(seed, N, P, b1, b2):
    g = randn(seed, N, P)
    rate, step = warmup.adam_moments(g, betas=(b1, b2), eps=1e-12)
    for n in range(1, N + 1):  # brute force: the weighted sums of eq-tf-adam
        w1 = torch.tensor([(1 - b1) * b1 ** (n - i) for i in range(1, n + 1)], dtype=F64)
        w2 = torch.tensor([(1 - b2) * b2 ** (n - i) for i in range(1, n + 1)], dtype=F64)
        m_hat = (w1 @ g[:n]) / (1 - b1**n)
        v_hat = (w2 @ g[:n] ** 2) / (1 - b2**n)
        torch.testing.assert_close(rate[n - 1], 1 / (v_hat.sqrt() + 1e-12))
        torch.testing.assert_close(step[n - 1], m_hat / (v_hat.sqrt() + 1e-12))
    refuses(warmup.adam_moments, g, betas=(b1, 1.5))
    refuses(warmup.adam_moments, numpy_of(g))


@covers("seqlearn.warmup.noam_rate", "seqlearn.warmup.linear_warmup_rate",
        "seqlearn.warmup.fit_scheduled")
@given(seed=seeds, steps=st.integers(2, 30), warm=st.integers(1, 40), d=st.integers(1, 600))
def test_warmup_rates_rise_then_fall(seed, steps, warm, d):
    rates = [warmup.noam_rate(n, d, warm) for n in range(1, 3 * warm + 2)]
    peak = int(np.argmax(rates)) + 1
    assert peak == warm
    assert rates[warm - 1] == max(rates) == (d * warm) ** -0.5 or math.isclose(
        max(rates), (d * warm) ** -0.5, rel_tol=1e-12)
    w = min(warm, steps - 1)
    linear = [warmup.linear_warmup_rate(k, steps, w) for k in range(steps)]
    assert max(linear) == 1.0 and all(0 < r <= 1 for r in linear)
    assert all(a <= b for a, b in zip(linear[:w], linear[1:w + 1]))  # rising while warming
    assert all(a >= b for a, b in zip(linear[w:], linear[w + 1:]))  # then falling
    torch.manual_seed(seed)
    model = nn.Linear(2, 1).double()
    lrs = []

    def loss(m, batch):
        lrs.append(warmup.linear_warmup_rate(len(lrs), steps, w))
        return m(batch).pow(2).mean()

    losses = warmup.fit_scheduled(model, lambda k: randn(seed + k, 4, 2), steps, loss=loss,
                                  lr=0.01, schedule=lambda k: linear[k])
    assert len(losses) == steps and lrs == linear
    refuses(warmup.noam_rate, 0, d, warm)
    refuses(warmup.linear_warmup_rate, steps, steps, w)
    refuses(warmup.fit_scheduled, model, lambda k: None, steps, loss=loss, lr=-1.0)
    refuses(warmup.fit_scheduled, model, "batches", steps, loss=loss, lr=0.1)
