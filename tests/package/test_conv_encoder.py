"""seqlearn.conv_encoder against a loop over positions and torch.nn.functional.conv1d
with copied weights (float64); its padding, its receptive field (Jacobian support) and
its use as the encoder of seqlearn.seq2seq.Seq2Seq."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from properties import covers, not_bools, randn, refuses, seeds, sizes
from seqlearn.complexity import jacobian_pattern
from seqlearn.conv_encoder import ConvEncoder
from seqlearn.data import Vocab, seq2seq_batch
from seqlearn.seq2seq import Seq2Seq

F64 = torch.float64
SETTINGS = settings(max_examples=8, deadline=None)
VOCAB = Vocab("abcdefgh")


def _encoder(D=3, H=4, layers=2, k=3, causal=False, seed=0) -> ConvEncoder:
    torch.manual_seed(seed)
    return ConvEncoder(D, H, layers=layers, kernel_size=k, causal=causal).double()


def _loop(enc: ConvEncoder, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The module docstring's equations, one position and one kernel tap at a time."""
    B, T, _ = x.shape
    k = enc.kernel_size
    o = k - 1 if enc.causal else (k - 1) // 2
    out = torch.zeros(B, T, enc.hidden_size, dtype=F64)
    for b in range(B):
        h = [enc.proj.weight @ x[b, t] + enc.proj.bias for t in range(T)]  # h^0
        for conv in enc.convs:
            bar = [h[t] if mask[b, t] else torch.zeros_like(h[t]) for t in range(T)]
            new = []
            for t in range(T):
                z = conv.bias.clone()
                for j in range(k):
                    s = t + j - o
                    if 0 <= s < T:  # zero outside the sequence
                        z = z + conv.weight[:, :, j] @ bar[s]
                new.append(h[t] + F.gelu(z))
            h = new
        for t in range(T):
            if mask[b, t]:
                out[b, t] = h[t]
    return out


def _conv1d(enc: ConvEncoder, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The same with torch.nn.functional.conv1d and copied weights (its own padding)."""
    k = enc.kernel_size
    h = F.linear(x, enc.proj.weight.clone(), enc.proj.bias.clone())
    m = mask[..., None].to(F64)
    for conv in enc.convs:
        W, b = conv.weight.clone(), conv.bias.clone()
        read = (h * m).transpose(1, 2)
        if enc.causal:
            z = F.conv1d(F.pad(read, (k - 1, 0)), W, b)
        else:
            z = F.conv1d(read, W, b, padding=(k - 1) // 2)
        h = h + F.gelu(z.transpose(1, 2))
    return h * m


def _lengths_mask(lengths: list[int], T: int) -> torch.Tensor:
    return torch.arange(T) < torch.tensor(lengths)[:, None]


@SETTINGS
@given(layers=st.integers(1, 3), half=st.integers(0, 2), causal=st.booleans(),
       seed=st.integers(0, 2**16))
def test_equals_the_loop_and_conv1d(layers, half, causal, seed):
    k = 2 * half + 1 + (1 if causal and seed % 2 else 0)  # even kernels only when causal
    enc = _encoder(layers=layers, k=k, causal=causal, seed=seed)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 7, 3, generator=g, dtype=F64)
    mask = _lengths_mask([7, 4, 1], 7)
    y, h_n = enc(x, mask)
    assert y.shape == (3, 7, 4) and h_n.shape == (1, 3, 4)
    torch.testing.assert_close(h_n[0], y[:, -1])
    torch.testing.assert_close(y, _loop(enc, x, mask), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(y, _conv1d(enc, x, mask), rtol=1e-12, atol=1e-12)
    full, _ = enc(x)  # mask=None: every position is a token
    torch.testing.assert_close(full, _conv1d(enc, x, torch.ones(3, 7, dtype=torch.bool)))


@SETTINGS
@given(causal=st.booleans(), extra=st.integers(0, 5), seed=st.integers(0, 2**16))
def test_padding_content_and_width_change_nothing(causal, extra, seed):
    enc = _encoder(layers=3, k=3, causal=causal, seed=seed)
    g = torch.Generator().manual_seed(seed)
    lengths = [6, 3, 1]
    x = torch.randn(3, 6, 3, generator=g, dtype=F64)
    mask = _lengths_mask(lengths, 6)
    y, _ = enc(x, mask)
    wide = torch.randn(3, 6 + extra, 3, generator=g, dtype=F64) * 100  # other padding
    wide[:, :6][mask] = x[mask]
    wide[1, 4] = float("nan")  # even NaN in the padding is never read
    y_wide, _ = enc(wide, _lengths_mask(lengths, 6 + extra))
    torch.testing.assert_close(y_wide[:, :6], y)
    assert not y_wide[~_lengths_mask(lengths, 6 + extra)].any()  # zero at padding


def test_a_causal_stack_needs_no_mask_for_padding_after_the_tokens():
    enc = _encoder(layers=3, k=4, causal=True)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 9, 3, generator=g, dtype=F64)
    y, _ = enc(x)
    later = x.clone()
    later[:, 5:] = torch.randn(2, 4, 3, generator=g, dtype=F64)  # other "padding"
    torch.testing.assert_close(enc(later)[0][:, :5], y[:, :5])


@SETTINGS
@given(layers=st.integers(1, 4), half=st.integers(1, 2), causal=st.booleans())
def test_receptive_field_is_one_plus_L_times_k_minus_one(layers, half, causal):
    k = 2 * half + 1
    enc = _encoder(layers=layers, k=k, causal=causal)
    T = 2 * layers * (k - 1) + 3
    x = torch.randn(T, 3, generator=torch.Generator().manual_seed(0), dtype=F64)
    reads = jacobian_pattern(lambda v: enc(v[None])[0][0], x)  # (T, T): y_t on x_s
    t, s = torch.meshgrid(torch.arange(T), torch.arange(T), indexing="ij")
    reach = layers * (k - 1)
    window = ((t - s >= 0) & (t - s <= reach)) if causal else ((t - s).abs() <= reach // 2)
    assert torch.equal(reads, window)
    assert enc.receptive_field == 1 + reach
    assert int(reads[T // 2].sum()) == enc.receptive_field  # an interior output


def test_seq2seq_conv_encoder_reads_both_sides_and_ignores_padding():
    torch.manual_seed(0)
    model = Seq2Seq(VOCAB, VOCAB, 8, score="additive", encoder="conv").double()
    fwd, bwd = model.encoder_fwd, model.encoder_bwd
    assert isinstance(fwd, ConvEncoder) and fwd.causal and bwd.causal
    pairs = [("abcdefgh" * 2, "x"), ("abc", "x"), ("hgfedcbahg", "x")]
    pairs = [(s, "".join(reversed(s))) for s, _ in pairs]
    batch = seq2seq_batch(pairs, VOCAB, VOCAB)
    wide = seq2seq_batch(pairs, VOCAB, VOCAB, src_width=30)
    logits, weights = model(batch.src, batch.src_lengths, batch.tgt_in)
    logits_wide, weights_wide = model(wide.src, wide.src_lengths, wide.tgt_in)
    torch.testing.assert_close(logits_wide, logits)
    torch.testing.assert_close(weights_wide[..., :16], weights)
    # h_i = [forward stack at i ; backward stack over the reversal, at i]
    states, code, mask = model.encode(batch.src, batch.src_lengths)
    for b, (src, _) in enumerate(pairs):
        L = len(src)
        x = model.src_embed(batch.src[b:b + 1, :L])  # (1, L, E)
        f = fwd(x)[0][0]
        r = bwd(x.flip(1))[0][0].flip(0)
        torch.testing.assert_close(states[b, :L], torch.cat([f, r], -1))
        torch.testing.assert_close(code[b], torch.cat([f[-1], r[0]]))
        assert not states[b, L:].any()
    # receptive field of h_i: L(k-1) characters on each side of i
    reach = fwd.layers * (fwd.kernel_size - 1)
    x = model.src_embed(batch.src[0]).detach()  # (16, E)
    lengths = torch.tensor([16])
    reads = jacobian_pattern(
        lambda v: _states_from_embeddings(model, v, lengths), x)
    t, s = torch.meshgrid(torch.arange(16), torch.arange(16), indexing="ij")
    assert torch.equal(reads, (t - s).abs() <= reach)
    # to_seqlearn keeps the convolutions and converts the decoder
    twin = model.to_seqlearn()
    torch.testing.assert_close(twin(batch.src, batch.src_lengths, batch.tgt_in)[0], logits)


def _states_from_embeddings(model: Seq2Seq, x: torch.Tensor, lengths) -> torch.Tensor:
    """Seq2Seq.encode's states from given embeddings (one sequence, all real)."""
    f = model.encoder_fwd(x[None])[0][0]
    r = model.encoder_bwd(x.flip(0)[None])[0][0].flip(0)
    return torch.cat([f, r], -1)


def test_encoder_callables_and_the_default():
    torch.manual_seed(0)
    lstm = Seq2Seq(VOCAB, VOCAB, 6, score="dot",
                   encoder=lambda E, H: torch.nn.LSTM(E, H, batch_first=True))
    assert isinstance(lstm.encoder_fwd, torch.nn.LSTM)
    batch = seq2seq_batch([("abc", "cba")], VOCAB, VOCAB)
    logits, _ = lstm(batch.src, batch.src_lengths, batch.tgt_in)
    assert logits.shape == (1, 4, len(VOCAB))
    assert isinstance(Seq2Seq(VOCAB, VOCAB, 6).encoder_fwd, torch.nn.GRU)
    one = Seq2Seq(VOCAB, VOCAB, 6, encoder="conv", bidirectional=False)
    assert one.encoder_bwd is None and one.encoder_fwd.hidden_size == 6


def test_refusals():
    with pytest.raises(ValueError, match="kernel_size must be odd"):
        ConvEncoder(3, 4, kernel_size=4)
    ConvEncoder(3, 4, kernel_size=4, causal=True)  # a causal window may be even
    with pytest.raises(TypeError, match="causal must be a bool"):
        ConvEncoder(3, 4, causal="yes")
    for name, kwargs in (("layers", {"layers": 0}), ("kernel_size", {"kernel_size": 0})):
        with pytest.raises(ValueError, match=name):
            ConvEncoder(3, 4, **kwargs)
    with pytest.raises(ValueError, match="input_size"):
        ConvEncoder(0, 4)
    enc = _encoder()
    x = torch.randn(2, 5, 3, dtype=F64)
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, D=3\)"):
        enc(x[..., :2])
    with pytest.raises(TypeError, match="x must be a floating-point tensor"):
        enc(x.long())
    with pytest.raises(TypeError, match="x must have the dtype"):
        enc(x.float())
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        enc(x, torch.ones(2, 5))
    with pytest.raises(ValueError, match="mask must have shape"):
        enc(x, torch.ones(2, 4, dtype=torch.bool))
    y, h_n = enc(x[:, :0])  # no positions: nothing to read
    assert y.shape == (2, 0, 4) and h_n.shape == (1, 2, 4)
    with pytest.raises(ValueError, match="encoder must be one of"):
        Seq2Seq(VOCAB, VOCAB, 4, encoder="cnn")
    with pytest.raises(TypeError, match="encoder must be one of"):
        Seq2Seq(VOCAB, VOCAB, 4, encoder=torch.nn.GRU(4, 2))
    with pytest.raises(TypeError, match=r"encoder\(4, 2\) must return"):
        Seq2Seq(VOCAB, VOCAB, 4, encoder=lambda E, H: None)


def test_trains_on_short_reversals():
    """A few steps lower the loss: the encoder's gradients reach every layer."""
    from seqlearn.train import fit_seq2seq

    rng = np.random.default_rng(0)
    pairs = [("".join(rng.choice(list("abcdefgh"), 4)), "") for _ in range(32)]
    pairs = [(s, s[::-1]) for s, _ in pairs]
    torch.manual_seed(0)
    model = Seq2Seq(VOCAB, VOCAB, 16, score="dot", encoder="conv")
    losses = fit_seq2seq(model, lambda k: seq2seq_batch(pairs, VOCAB, VOCAB), 30, lr=1e-2)
    assert losses[-1] < 0.6 * losses[0]
    assert all(conv.weight.grad is not None and conv.weight.grad.abs().sum() > 0
               for conv in model.encoder_fwd.convs)


# ------------------------------------------------------------------ property test

def _conv1d_reference(enc: ConvEncoder, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    k = enc.kernel_size
    m = mask[..., None].to(x.dtype)
    h = F.linear(x, enc.proj.weight, enc.proj.bias)
    for conv in enc.convs:
        read = F.pad((h * m).transpose(1, 2), enc.padding)
        h = h + F.gelu(F.conv1d(read, conv.weight, conv.bias)).transpose(1, 2)
    assert enc.padding == ((k - 1, 0) if enc.causal else ((k - 1) // 2, (k - 1) // 2))
    return h * m


@covers("seqlearn.conv_encoder.ConvEncoder")
@given(seed=seeds, B=sizes, T=st.integers(1, 9), D=sizes, H=sizes, layers=st.integers(1, 3),
       half=st.integers(0, 2), causal=st.booleans(), flag=not_bools)
def test_conv_encoder_equals_conv1d_and_reads_its_window(seed, B, T, D, H, layers, half,
                                                         causal, flag):
    torch.manual_seed(seed % 1000)
    k = 2 * half + 1
    enc = ConvEncoder(D, H, layers=layers, kernel_size=k, causal=causal).double()
    x = randn(seed, B, T, D)
    lengths = torch.randint(1, T + 1, (B,), generator=torch.Generator().manual_seed(seed))
    mask = torch.arange(T) < lengths[:, None]
    y, h_n = enc(x, mask)
    torch.testing.assert_close(y, _conv1d_reference(enc, x, mask))
    torch.testing.assert_close(h_n[0], y[:, -1])
    noisy = torch.where(mask[..., None], x, randn(seed + 1, B, T, D))  # other padding
    torch.testing.assert_close(enc(noisy, mask)[0], y)
    # one output reads 1 + L(k-1) inputs: change the input just outside the window
    reach = layers * (k - 1)
    t = T - 1 if causal else T // 2
    lo = t - reach if causal else t - reach // 2
    hi = t if causal else t + reach // 2
    full, _ = enc(x)
    for s in range(T):
        moved = x.clone()
        moved[:, s] += 1.0
        changed = not torch.allclose(enc(moved)[0][:, t], full[:, t], rtol=0, atol=0)
        assert changed == (lo <= s <= hi), (s, t, lo, hi)
    assert enc.receptive_field == 1 + reach
    refuses(ConvEncoder, D, H, causal=flag)
    refuses(enc, x, mask.double())
    refuses(enc, x.float(), mask)
    refuses(enc, x[..., :0] if D > 1 else x.expand(B, T, 2), mask)
