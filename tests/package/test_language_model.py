"""seqlearn.language_model: bits per character by hand, the models against torch.nn;
properties at random sizes."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, strategies as st
from torch import nn

from properties import covers, not_bools, refuses, seeds, sizes
from seqlearn import language_model as lm
from seqlearn.char_text import consecutive_windows
from seqlearn.gated import LSTM
from seqlearn.language_model import (CausalBlock, CausalTransformerLM, RecurrentLM,
                                     bits_per_character, held_out_bits,
                                     language_model_loss, lstm_gates, parameter_count)
from seqlearn.recurrent import ElmanRNN
from seqlearn.transformer import sinusoidal_positional_encoding


F64 = torch.float64


# --------------------------------------------------------------------------- bits per character

def test_bits_per_character_by_hand():
    # p(target) = 1/2, 1/4, 1/8: -log2 gives 1, 2, 3 bits, mean 2
    probs = torch.tensor([[0.5, 0.5, 0.0 + 1e-300], [0.25, 0.5, 0.25], [0.125, 0.125, 0.75]],
                         dtype=F64)
    bits = bits_per_character(probs.log(), torch.tensor([0, 2, 1]))
    assert math.isclose(float(bits), 2.0, rel_tol=1e-12)
    uniform = torch.zeros(2, 5, 8, dtype=F64)  # any logits equal: log2(8) = 3 bits
    assert math.isclose(float(bits_per_character(uniform, torch.zeros(2, 5).long())), 3.0)


def test_bits_per_character_is_cross_entropy_over_ln2_and_ignores():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 7, 11, generator=g, dtype=F64)
    y = torch.randint(0, 11, (3, 7), generator=g)
    y[1, 4:] = -1
    want = F.cross_entropy(logits.reshape(-1, 11), y.reshape(-1), ignore_index=-1) / math.log(2)
    torch.testing.assert_close(bits_per_character(logits, y), want)
    with pytest.raises(ValueError, match="targets must have shape"):
        bits_per_character(logits, y[:, :3])
    with pytest.raises(ValueError, match=r"ids in \[0, 11\)"):
        bits_per_character(logits, torch.full((3, 7), 11))
    with pytest.raises(ValueError, match="at least one target"):
        bits_per_character(logits, torch.full((3, 7), -1))
    with pytest.raises(TypeError, match="LongTensor"):
        bits_per_character(logits, y.int())
    with pytest.raises(TypeError, match="floating"):
        bits_per_character(y, y)


# --------------------------------------------------------------------------- recurrent models

def _torch_reference(model):
    """nn.Embedding -> nn.RNN / nn.LSTM -> nn.Linear with the model's weights."""
    cell = model.readable().rnn.cells[0]
    kind = nn.LSTM if model.cell == "lstm" else nn.RNN
    rnn = kind(cell.input_size, cell.hidden_size, batch_first=True, dtype=F64)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(rnn, name + "_l0").copy_(getattr(cell, name))
    return lambda x, s=None: (lambda y, st: (model.out(y), st))(*rnn(model.embed(x), s))


@pytest.mark.parametrize("cell", ["elman", "lstm"])
@pytest.mark.parametrize("fast", [False, True])
def test_recurrent_lm_equals_torch_nn(cell, fast):
    torch.manual_seed(0)
    model = RecurrentLM(13, 4, 6, cell=cell, fast=fast).double()
    assert isinstance(model.readable().rnn, LSTM if cell == "lstm" else ElmanRNN)
    x = torch.randint(0, 13, (3, 9))
    logits, state = model(x)
    ref_logits, ref_state = _torch_reference(model)(x)
    torch.testing.assert_close(logits, ref_logits)
    torch.testing.assert_close(state, ref_state)
    readable_logits, _ = model.readable()(x)
    torch.testing.assert_close(readable_logits, logits)
    # the state carries on: two calls equal one
    first, s = model(x[:, :4])
    second, _ = model(x[:, 4:], s)
    torch.testing.assert_close(torch.cat([first, second], 1), logits)


def test_recurrent_lm_parameter_count_by_hand():
    V, E, H = 13, 4, 6
    lstm = RecurrentLM(V, E, H, cell="lstm")
    assert parameter_count(lstm) == V * E + 4 * H * (E + H) + 8 * H + H * V + V
    elman = RecurrentLM(V, E, H, cell="elman", fast=True)
    assert parameter_count(elman) == V * E + H * (E + H) + 2 * H + H * V + V
    with pytest.raises(TypeError, match="torch.nn.Module"):
        parameter_count("model")


def test_recurrent_lm_validation():
    with pytest.raises(ValueError, match="cell must be one of"):
        RecurrentLM(5, 2, 3, cell="gru")
    with pytest.raises(TypeError, match="fast must be a bool"):
        RecurrentLM(5, 2, 3, fast=1)
    model = RecurrentLM(5, 2, 3)
    with pytest.raises(ValueError, match=r"x must hold ids in \[0, 5\)"):
        model(torch.tensor([[0, 5]]))
    with pytest.raises(TypeError, match="LongTensor"):
        model(torch.tensor([[0.0, 1.0]]))


def test_lstm_gates_follow_the_cell_and_the_model():
    torch.manual_seed(1)
    model = RecurrentLM(9, 3, 5, cell="lstm", fast=True).double()
    x = torch.randint(0, 9, (2, 7))
    gates = lstm_gates(model, x)
    assert gates.c.shape == gates.h.shape == (2, 7, 5)
    y, (h_n, c_n) = model.rnn(model.embed(x))
    torch.testing.assert_close(gates.h, y)
    torch.testing.assert_close(gates.c[:, -1], c_n[0])
    c_prev = torch.cat([torch.zeros(2, 1, 5, dtype=F64), gates.c[:, :-1]], 1)
    torch.testing.assert_close(gates.c, gates.f * c_prev + gates.i * gates.g)
    torch.testing.assert_close(gates.h, gates.o * torch.tanh(gates.c))
    with pytest.raises(TypeError, match="cell='lstm'"):
        lstm_gates(RecurrentLM(9, 3, 5, cell="elman"), x)


# --------------------------------------------------------------------------- the Transformer

def _torch_layer(d, heads, d_ff):
    return nn.TransformerEncoderLayer(d, heads, d_ff, dropout=0.0, norm_first=True,
                                      batch_first=True, dtype=F64)


def test_causal_block_equals_torch_encoder_layer_with_a_causal_mask():
    torch.manual_seed(2)
    ref = _torch_layer(8, 2, 16)
    block = CausalBlock.from_torch(ref)
    x = torch.randn(3, 6, 8, dtype=F64)
    mask = nn.Transformer.generate_square_subsequent_mask(6, dtype=F64)
    torch.testing.assert_close(block(x), ref(x, src_mask=mask, is_causal=True))
    assert block.weights.shape == (3, 2, 6, 6)
    assert bool((block.weights.triu(1) == 0).all())
    with pytest.raises(ValueError, match="norm_first=True"):
        CausalBlock.from_torch(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True))
    with pytest.raises(TypeError, match="TransformerEncoderLayer"):
        CausalBlock.from_torch(nn.Linear(2, 2))
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, d=8\)"):
        block(torch.randn(3, 6, 7, dtype=F64))


def test_causal_transformer_equals_a_torch_composition():
    torch.manual_seed(3)
    V, d, heads, L, d_ff, C = 11, 8, 2, 2, 16, 10
    model = CausalTransformerLM(V, d, heads, L, d_ff, context=C).double()
    layers = [_torch_layer(d, heads, d_ff) for _ in range(L)]
    model.blocks = nn.ModuleList(CausalBlock.from_torch(m) for m in layers)
    norm = nn.LayerNorm(d, dtype=F64)
    nn.init.normal_(norm.weight)
    nn.init.normal_(norm.bias)
    model.norm.weight.data.copy_(norm.weight)
    model.norm.bias.data.copy_(norm.bias)
    x = torch.randint(0, V, (2, 7))
    z = model.embed(x) + sinusoidal_positional_encoding(7, d, dtype=F64)
    mask = nn.Transformer.generate_square_subsequent_mask(7, dtype=F64)
    for m in layers:
        z = m(z, src_mask=mask, is_causal=True)
    logits, state = model(x)
    torch.testing.assert_close(logits, model.out(norm(z)))
    assert state.tolist() == x.tolist()  # fewer than context - 1 characters: all kept


def test_causal_transformer_is_causal_and_continues_from_its_state():
    torch.manual_seed(4)
    model = CausalTransformerLM(11, 8, 2, 2, 16, context=8).double()
    x = torch.randint(0, 11, (2, 8))
    logits, state = model(x)
    changed = x.clone()
    changed[:, 5:] = (changed[:, 5:] + 1) % 11
    torch.testing.assert_close(model(changed)[0][:, :5], logits[:, :5])  # the past stays
    assert not torch.allclose(model(changed)[0][:, 5:], logits[:, 5:])
    first, s = model(x[:, :3])
    second, s2 = model(x[:, 3:], s)
    torch.testing.assert_close(torch.cat([first, second], 1), logits)
    assert s2.tolist() == x[:, 1:].tolist()  # the last context - 1 characters
    one, _ = model(x[:, :1], model(x[:, :7])[1][:, :0])  # an empty state is no context
    torch.testing.assert_close(one, logits[:, :1])
    with pytest.raises(ValueError, match="at most context=8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(ValueError, match=r"state must have shape \(B=2, S\)"):
        model(x, torch.zeros(3, 2, dtype=torch.long))
    with pytest.raises(TypeError, match="state must be a LongTensor"):
        model(x, torch.zeros(2, 2))
    assert len(model.attention_maps()) == 2


# --------------------------------------------------------------------------- evaluation, loss

@pytest.mark.parametrize("make", [lambda: RecurrentLM(7, 3, 4, cell="lstm").double(),
                                  lambda: CausalTransformerLM(7, 4, 2, 1, 8,
                                                              context=5).double()])
def test_held_out_bits_equals_a_loop_over_windows(make):
    torch.manual_seed(5)
    model = make()
    ids = torch.randint(0, 7, (23,))
    total, count = 0.0, 0
    x, y = consecutive_windows(ids, 5)
    for w in range(x.shape[0]):
        with torch.no_grad():
            logits, _ = model(x[w: w + 1])
        for t in range(5):
            if y[w, t] >= 0:
                p = torch.softmax(logits[0, t], -1)[y[w, t]]
                total -= math.log2(float(p))
                count += 1
    assert count == 22
    assert math.isclose(held_out_bits(model, ids, 5, batch_size=2), total / count,
                        rel_tol=1e-10)
    assert model.training  # the mode is restored


@pytest.mark.parametrize("cell", ["elman", "lstm"])
def test_held_out_bits_carry_reads_the_text_as_one_stream(cell):
    """A recurrent model carrying its state scores every character from the whole text
    before it: one forward pass over the text gives the same bits."""
    torch.manual_seed(7)
    model = RecurrentLM(7, 3, 4, cell=cell, fast=True).double()
    ids = torch.randint(0, 7, (23,))
    with torch.no_grad():
        logits, _ = model(ids[None, :-1])  # (1, 22, V): one pass, no restart
    log_p = torch.log_softmax(logits[0], -1).gather(1, ids[1:, None])[:, 0]
    want = float(-log_p.mean()) / math.log(2)
    assert math.isclose(held_out_bits(model, ids, 5, carry=True), want, rel_tol=1e-10)
    assert not math.isclose(held_out_bits(model, ids, 5), want, rel_tol=1e-6)


def test_held_out_bits_carry_gives_a_transformer_its_last_context_characters():
    """A Transformer carrying its state predicts the characters of window w from the
    last `context` characters that end with the window (fewer at the text's start)."""
    torch.manual_seed(8)
    context, L = 8, 3
    model = CausalTransformerLM(7, 4, 2, 1, 8, context=context).double()
    ids = torch.randint(0, 7, (24,))
    x, y = ids[:-1], ids[1:]
    total = 0.0
    for w in range(0, len(x), L):
        end = min(w + L, len(x))
        read = x[max(0, end - context): end]  # what the model sees, oldest first
        with torch.no_grad():
            logits, _ = model(read[None])
        probs = torch.softmax(logits[0, -(end - w):], -1)  # the window's characters
        total -= sum(math.log2(float(probs[i, y[w + i]])) for i in range(end - w))
    assert math.isclose(held_out_bits(model, ids, L, carry=True), total / len(y),
                        rel_tol=1e-10)
    with pytest.raises(TypeError, match="carry must be a bool"):
        held_out_bits(model, ids, L, carry=1)


def test_language_model_loss_is_the_cross_entropy():
    torch.manual_seed(6)
    model = RecurrentLM(7, 3, 4).double()
    x, y = torch.randint(0, 7, (2, 5)), torch.randint(0, 7, (2, 5))
    logits, _ = model(x)
    torch.testing.assert_close(language_model_loss(model, (x, y)),
                               F.cross_entropy(logits.reshape(-1, 7), y.reshape(-1)))
    with pytest.raises(TypeError, match="pair"):
        language_model_loss(model, x)
    with pytest.raises(ValueError, match=r"y must have shape \(B=2, T=5\)"):
        language_model_loss(model, (x, y[:, :3]))


# ---------------------------------------------- properties at random sizes (hypothesis)


@covers("seqlearn.language_model.bits_per_character",
        "seqlearn.language_model.language_model_loss",
        "seqlearn.language_model.parameter_count")
@given(seed=seeds, B=sizes, T=sizes, V=st.integers(1, 6))
def test_bits_are_nats_over_ln2(seed, B, T, V):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(B, T, V, generator=g, dtype=F64)
    y = torch.randint(0, V, (B, T), generator=g)
    nats = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
    torch.testing.assert_close(lm.bits_per_character(logits, y), nats / math.log(2))
    model = lm.RecurrentLM(V, 2, 3).double()
    with torch.no_grad():
        logits, _ = model(y)
        torch.testing.assert_close(lm.language_model_loss(model, (y, y)),
                                   F.cross_entropy(logits.reshape(-1, V), y.reshape(-1)))
    assert lm.parameter_count(model) == sum(p.numel() for p in model.parameters())
    refuses(lm.bits_per_character, logits, y[..., None])
    refuses(lm.parameter_count, None)


@covers("seqlearn.language_model.RecurrentLM", "seqlearn.language_model.lstm_gates")
@given(seed=seeds, B=sizes, T=sizes, V=st.integers(1, 6), E=sizes, H=sizes,
       cell=st.sampled_from(["elman", "lstm"]), flag=not_bools)
def test_recurrent_lm_equals_torch_and_its_readable_copy(seed, B, T, V, E, H, cell, flag):
    torch.manual_seed(seed)
    model = lm.RecurrentLM(V, E, H, cell=cell, fast=True).double()
    x = torch.randint(0, V, (B, T))
    logits, state = model(x)
    y, _ = model.rnn(model.embed(x))
    torch.testing.assert_close(logits, model.out(y))
    torch.testing.assert_close(model.readable()(x)[0], logits)
    if cell == "lstm":
        torch.testing.assert_close(lm.lstm_gates(model, x).h, y)
    else:
        refuses(lm.lstm_gates, model, x)
    refuses(model, x + V)
    refuses(lm.RecurrentLM, V, E, H, fast=flag)


@covers("seqlearn.language_model.CausalBlock", "seqlearn.language_model.CausalTransformerLM",
        "seqlearn.language_model.held_out_bits")
@given(seed=seeds, B=sizes, T=st.integers(1, 6), heads=st.integers(1, 2), V=st.integers(1, 6))
def test_transformer_equals_torch_layers_and_is_causal(seed, B, T, heads, V):
    torch.manual_seed(seed)
    d = 4 * heads
    ref = nn.TransformerEncoderLayer(d, heads, 8, dropout=0.0, norm_first=True,
                                     batch_first=True, dtype=F64)
    block = lm.CausalBlock.from_torch(ref)
    z = torch.randn(B, T, d, dtype=F64)
    mask = nn.Transformer.generate_square_subsequent_mask(T, dtype=F64)
    torch.testing.assert_close(block(z), ref(z, src_mask=mask, is_causal=True))
    model = lm.CausalTransformerLM(V, d, heads, 1, 8, context=6).double()
    x = torch.randint(0, V, (B, T))
    logits, _ = model(x)
    for t in range(T):  # a prefix alone gives the same logits
        torch.testing.assert_close(model(x[:, : t + 1])[0], logits[:, : t + 1])
    ids = torch.randint(0, V, (T + 1,))
    with torch.no_grad():
        manual = lm.bits_per_character(model(ids[None, :-1])[0][0], ids[1:])
    assert math.isclose(lm.held_out_bits(model, ids, 6), float(manual), rel_tol=1e-9)
    refuses(model, torch.zeros(1, 7, dtype=torch.long))
    refuses(block, z.float())
