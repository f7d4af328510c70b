"""seqlearn.decoding against an exhaustive search over every output sequence (float64).

On a target vocabulary of V = 5 ids (<pad>, <bos>, <eos>, a, b) and at most 3 tokens
there are few enough sequences to score them all under teacher forcing (the model's
``forward``, not its step): the sequence that maximises log p(y | x) / |y|^alpha is the
one beam search with V ** max_len beams must return, and every hypothesis must come out
with its exact score.

Property tests at random sizes follow the tests above."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from hypothesis import given, settings, strategies as st

from properties import covers, refuses, seeds
from seqlearn import decoding
from seqlearn.data import Vocab, seq2seq_batch
from seqlearn.decoding import (BeamResult, StepDecoder, beam_search, normalised_score,
                               seq2seq_decoder, transformer_decoder)
from seqlearn.seq2seq import Seq2Seq
from seqlearn.transformer import Transformer


F64 = torch.float64
SRC, TGT = Vocab("abcd"), Vocab("ab")  # 7 and 5 ids
V = len(TGT)
SOURCES = [("abc", ""), ("d", ""), ("bcdab", ""), ("ca", "")]
SETTINGS = settings(max_examples=6, deadline=None)


def _seq2seq(seed: int, score="dot", sharp: float = 4.0) -> Seq2Seq:
    torch.manual_seed(seed)
    model = Seq2Seq(SRC, TGT, 4, score=score, embedding=3).double().eval()
    with torch.no_grad():
        model.out.weight.mul_(sharp)  # peaked distributions: greedy and the optimum differ
    return model


def _transformer(seed: int, sharp: float = 4.0) -> Transformer:
    torch.manual_seed(seed)
    model = Transformer(len(SRC), V, 8, 2, 1, 16, max_len=6).double().eval()
    with torch.no_grad():
        model.out.weight.mul_(sharp)
    return model


def _batch():
    return seq2seq_batch(SOURCES, SRC, TGT)


def _token_log_probs(model, batch, rows: torch.Tensor) -> torch.Tensor:
    """log p(y_t | y_<t, x) of each row of ``rows`` (n, T) for every source: (B, n, T),
    by the model's teacher-forced ``forward``."""
    B, n = batch.src.shape[0], len(rows)
    tgt_in = torch.cat([torch.full((n, 1), TGT.bos), rows[:, :-1]], 1)  # (n, T)
    src, tgt_in = batch.src.repeat_interleave(n, 0), tgt_in.repeat(B, 1)  # B n rows
    with torch.no_grad():
        if isinstance(model, Seq2Seq):
            lengths = batch.src_lengths.repeat_interleave(n, 0)
            logits, _ = model(src, lengths, tgt_in)
        else:
            mask = batch.src_mask.repeat_interleave(n, 0)
            logits = model(src, tgt_in, src_mask=mask)
    lp = torch.log_softmax(logits, -1).gather(-1, rows.repeat(B, 1)[..., None])[..., 0]
    return lp.view(B, n, -1)


def _teacher_forced(model, batch, rows: torch.Tensor) -> torch.Tensor:
    """log p(y | x) of each row of ``rows`` (n, T) for every source: (B, n)."""
    return _token_log_probs(model, batch, rows).sum(-1)


def _exhaustive(model, batch, max_len: int, alpha: float) -> dict[tuple, torch.Tensor]:
    """Every candidate sequence -> its scores (B,): ended by the first <eos>, or cut."""
    found = {}
    for n in range(1, max_len + 1):
        seqs = [s for s in itertools.product(range(V), repeat=n)
                if TGT.eos not in s[:-1] and (s[-1] == TGT.eos or n == max_len)]
        lp = _teacher_forced(model, batch, torch.tensor(seqs))  # (B, len(seqs))
        for k, s in enumerate(seqs):
            found[s] = (lp[:, k], lp[:, k] / n ** alpha)
    return found


def _decoder(model, batch) -> StepDecoder:
    if isinstance(model, Seq2Seq):
        return seq2seq_decoder(model, batch.src, batch.src_lengths)
    return transformer_decoder(model, batch.src, bos=TGT.bos, eos=TGT.eos, pad=TGT.pad,
                               src_mask=batch.src_mask)


def _hypothesis(row: torch.Tensor, length: int) -> tuple:
    return tuple(row[:length].tolist())


@pytest.mark.parametrize("kind", ["seq2seq", "transformer"])
@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_beam_of_every_sequence_finds_the_exhaustive_argmax(kind, alpha):
    max_len, batch = 3, _batch()
    beaten = 0  # sources where greedy is not the optimum (so the test is not vacuous)
    for seed in range(2):
        model = _seq2seq(seed) if kind == "seq2seq" else _transformer(seed)
        found = _exhaustive(model, batch, max_len, alpha)
        result = beam_search(_decoder(model, batch), V ** max_len, max_len,
                             length_penalty=alpha)
        assert isinstance(result, BeamResult)
        greedy = beam_search(_decoder(model, batch), 1, max_len, length_penalty=alpha)
        for b in range(len(SOURCES)):
            scores = torch.stack([score[b] for _, score in found.values()])
            best = max(found, key=lambda s: float(found[s][1][b]))
            assert _hypothesis(result.tokens[b, 0], int(result.lengths[b, 0])) == best
            torch.testing.assert_close(result.scores[b, 0], scores.max())
            # no hypothesis was pruned: every sequence is a beam, with its exact scores
            kept = result.lengths[b] > 0
            assert int(kept.sum()) == len(found)
            seqs = [_hypothesis(result.tokens[b, k], int(result.lengths[b, k]))
                    for k in range(int(kept.sum()))]
            assert set(seqs) == set(found)
            torch.testing.assert_close(result.log_probs[b, kept],
                                       torch.stack([found[s][0][b] for s in seqs]))
            torch.testing.assert_close(result.scores[b, kept],
                                       torch.stack([found[s][1][b] for s in seqs]))
            after = torch.arange(max_len) >= result.lengths[b, :, None]  # (K, max_len)
            assert bool((result.tokens[b][after] == TGT.pad).all())
            assert bool(torch.isinf(result.scores[b, ~kept]).all())
            assert float(greedy.scores[b, 0]) <= float(scores.max()) + 1e-12
            beaten += float(greedy.scores[b, 0]) < float(scores.max()) - 1e-9
    assert beaten > 0


@pytest.mark.parametrize("score", [None, "dot", "additive"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_beam_is_the_models_greedy_decoding_seq2seq(score, seed):
    model, batch = _seq2seq(seed, score, sharp=1.0), _batch()
    for max_len in (1, 4, 9):
        greedy, _ = model.greedy_decode(batch.src, batch.src_lengths, max_len)
        result = beam_search(_decoder(model, batch), 1, max_len, length_penalty=0.7)
        assert torch.equal(result.best, greedy)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_beam_is_the_models_greedy_decoding_transformer(seed):
    model, batch = _transformer(seed, sharp=1.0), _batch()
    for max_len in (1, 3, 5):
        greedy = model.greedy_decode(batch.src, max_len, TGT.bos, TGT.eos,
                                     src_mask=batch.src_mask, pad=TGT.pad)
        result = beam_search(_decoder(model, batch), 1, max_len)
        assert torch.equal(result.best, greedy)


@pytest.mark.parametrize("kind", ["seq2seq", "transformer"])
def test_a_batch_decodes_as_its_sources_one_by_one(kind):
    model = _seq2seq(3, "additive") if kind == "seq2seq" else _transformer(3)
    batch = _batch()
    together = beam_search(_decoder(model, batch), 4, 5, length_penalty=1.0)
    for b, pair in enumerate(SOURCES):
        alone = beam_search(_decoder(model, seq2seq_batch([pair], SRC, TGT)), 4, 5,
                            length_penalty=1.0)
        L = alone.tokens.shape[-1]
        assert torch.equal(together.tokens[b, :, :L], alone.tokens[0])
        assert bool((together.tokens[b, :, L:] == TGT.pad).all())
        torch.testing.assert_close(together.scores[b], alone.scores[0])


@SETTINGS
@given(seed=st.integers(0, 10_000), K=st.integers(2, 6), alpha=st.sampled_from([0.0, 1.0]))
def test_every_beam_carries_its_teacher_forced_log_probability(seed, K, alpha):
    model, batch = _seq2seq(seed % 50, "additive", sharp=2.0), _batch()
    result = beam_search(_decoder(model, batch), K, 4, length_penalty=alpha)
    assert result.tokens.shape[:2] == (len(SOURCES), K)
    assert bool((result.scores[:, :-1] >= result.scores[:, 1:]).all())  # best first
    for b in range(len(SOURCES)):
        seqs = {_hypothesis(result.tokens[b, k], int(result.lengths[b, k])) for k in range(K)}
        assert len(seqs) == K  # K different hypotheses
        n = result.lengths[b]  # (K,)
        assert bool(((n == 4) | (result.tokens[b, range(K), n - 1] == TGT.eos)).all())
        rows = torch.stack([torch.cat([result.tokens[b, k, :int(n[k])],
                                       torch.full((4 - int(n[k]),), TGT.pad)])
                            for k in range(K)])  # (K, 4)
        one = seq2seq_batch([SOURCES[b]], SRC, TGT)
        mask = torch.arange(4) < n[:, None]  # (K, 4): the tokens of each hypothesis
        lp = (_token_log_probs(model, one, rows)[0] * mask).sum(-1)  # (K,)
        torch.testing.assert_close(result.log_probs[b], lp)
        torch.testing.assert_close(result.scores[b], lp / n.double() ** alpha)


def _markov_decoder(table: torch.Tensor) -> StepDecoder:
    """A decoder whose next token depends on the previous token only: p = table[y_prev]."""
    def step(y_prev, state):
        return torch.log(table[y_prev]), state
    return StepDecoder(step, torch.zeros(1, 1), 1, table.shape[1], bos=1, eos=2, pad=0)


def test_beam_search_finds_what_greedy_misses_on_a_hand_made_model():
    # ids 3 = a, 4 = b. First step: a 0.6, b 0.4; after a: a 0.55, b 0.45; after b: a 0.9
    # (the seq2seq chapter's exercise 1, its tie broken); two letters, cut at max_len = 2
    table = torch.full((5, 5), 1e-12, dtype=F64)
    table[1, 3], table[1, 4] = 0.6, 0.4  # after <bos>
    table[3, 3], table[3, 4] = 0.55, 0.45
    table[4, 3], table[4, 4] = 0.9, 0.1
    table = table / table.sum(1, keepdim=True)
    two = _markov_decoder(table)
    greedy, beam = beam_search(two, 1, 2), beam_search(two, 2, 2)
    assert greedy.best[0].tolist() == [3, 3]
    assert beam.best[0].tolist() == [4, 3]
    torch.testing.assert_close(beam.log_probs[0, 0], torch.tensor(math.log(0.36), dtype=F64))
    torch.testing.assert_close(greedy.log_probs[0, 0], torch.tensor(math.log(0.33), dtype=F64))
    assert beam.lengths.tolist() == [[2, 2]]


def test_length_normalisation_changes_which_finished_hypothesis_wins():
    # after <bos>: <eos> 0.45, a 0.55; after a: a 0.7, <eos> 0.3; cut at two tokens
    table = torch.full((5, 5), 1e-9, dtype=F64)
    table[1, 2], table[1, 3] = 0.45, 0.55
    table[3, 3], table[3, 2] = 0.7, 0.3
    table[0, 0] = 1.0
    table = table / table.sum(1, keepdim=True)
    decoder = _markov_decoder(table)
    short = beam_search(decoder, 5, 2, length_penalty=0.0)  # <eos>: 0.45 > a a: 0.385
    long = beam_search(decoder, 5, 2, length_penalty=1.0)  # log(0.385) / 2 > log 0.45
    assert short.best[0, : short.lengths[0, 0]].tolist() == [2]
    assert long.best[0].tolist() == [3, 3]
    assert int(long.lengths[0, 0]) == 2  # cut at max_len without <eos>


def test_fewer_sequences_than_beams_leave_empty_beams():
    table = torch.full((3, 3), 1 / 3, dtype=F64)  # pad, bos, eos only: <eos> or <pad>/<bos>
    decoder = StepDecoder(lambda y, s: (torch.log(table[y]), s), torch.zeros(2, 3), 2, 3,
                          bos=1, eos=2, pad=0)
    result = beam_search(decoder, 8, 1)  # 3 sequences of one token
    assert result.tokens.shape == (2, 8, 1)
    assert result.lengths[:, :3].tolist() == [[1, 1, 1]] * 2
    assert bool(torch.isinf(result.scores[:, 3:]).all())
    assert bool((result.lengths[:, 3:] == 0).all() and (result.tokens[:, 3:] == 0).all())


def test_normalised_score_is_log_prob_over_length_to_the_alpha():
    lp = torch.tensor([[-1.0, -2.5], [-torch.inf, -0.3]], dtype=F64)
    n = torch.tensor([[1, 4], [2, 3]])
    for alpha in (0.0, 0.5, 1.0, 2.0):
        want = torch.tensor([[lp[i, j] / float(n[i, j]) ** alpha for j in range(2)]
                             for i in range(2)], dtype=F64)
        torch.testing.assert_close(normalised_score(lp, n, alpha), want)


def test_the_transformer_state_grows_by_one_token_per_step():
    model, batch = _transformer(0), _batch()
    decoder = _decoder(model, batch)
    assert decoder.max_len == model.max_len
    y = torch.full((len(SOURCES),), TGT.bos)
    logits, state = decoder.step(y, decoder.state)
    assert state[2].tolist() == [[TGT.bos]] * len(SOURCES)
    with torch.no_grad():
        first = model(batch.src, y[:, None], src_mask=batch.src_mask)[:, 0]
    torch.testing.assert_close(logits, first)


# --------------------------------------------------------------------------- validation

def test_beam_search_validates_its_arguments():
    model, batch = _transformer(0), _batch()
    decoder = _decoder(model, batch)
    with pytest.raises(TypeError, match="decoder must be a StepDecoder"):
        beam_search(model, 2, 3)
    with pytest.raises(ValueError, match="beam_size must be positive, got 0"):
        beam_search(decoder, 0, 3)
    with pytest.raises(TypeError, match="beam_size must be an int"):
        beam_search(decoder, 2.0, 3)
    with pytest.raises(ValueError, match="max_len must be at most 6, got 7"):
        beam_search(decoder, 2, 7)
    with pytest.raises(ValueError, match="length_penalty must be at least 0.0, got -1.0"):
        beam_search(decoder, 2, 3, length_penalty=-1.0)
    with pytest.raises(ValueError, match="length_penalty must be a finite number"):
        beam_search(decoder, 2, 3, length_penalty=math.nan)


def test_beam_search_checks_what_the_step_returns():
    state = torch.zeros(2, 1)
    wide = StepDecoder(lambda y, s: (torch.zeros(len(y), 6), s), state, 2, 5, 1, 2, 0)
    with pytest.raises(ValueError, match=r"logits that step returns must have shape "
                                         r"\(N=6, V=5\), got \(6, 6\)"):
        beam_search(wide, 3, 2)
    ints = StepDecoder(lambda y, s: (torch.zeros(len(y), 5, dtype=torch.long), s), state, 2,
                       5, 1, 2, 0)
    with pytest.raises(TypeError, match="logits that step returns must be a floating"):
        beam_search(ints, 3, 2)
    nan = StepDecoder(lambda y, s: (torch.full((len(y), 5), math.nan), s), state, 2, 5, 1, 2, 0)
    with pytest.raises(ValueError, match="NaN log-probabilities at step 1"):
        beam_search(nan, 3, 2)


def test_step_decoder_validates_its_fields():
    state = torch.zeros(2, 3)
    step = lambda y, s: (torch.zeros(len(y), 5), s)  # noqa: E731
    with pytest.raises(TypeError, match="step must be a callable"):
        StepDecoder("step", state, 2, 5, 1, 2, 0)
    with pytest.raises(ValueError, match="bos must be at most 4, got 5"):
        StepDecoder(step, state, 2, 5, 5, 2, 0)
    with pytest.raises(ValueError, match="eos and pad must be different ids"):
        StepDecoder(step, state, 2, 5, 1, 0, 0)
    with pytest.raises(ValueError, match=r"state tensor 1 must have batch_size=2 rows first, "
                                         r"got shape \(3, 1\)"):
        StepDecoder(step, (state, None, {"x": torch.zeros(3, 1)}), 2, 5, 1, 2, 0)
    with pytest.raises(TypeError, match="state must hold at least one tensor"):
        StepDecoder(step, None, 2, 5, 1, 2, 0)
    with pytest.raises(ValueError, match="vocab_size must be at least 2"):
        StepDecoder(step, state, 2, 1, 0, 0, 0)
    with pytest.raises(TypeError, match="max_len must be an int"):
        StepDecoder(step, state, 2, 5, 1, 2, 0, max_len=3.0)


def test_adapters_validate_their_models_and_sources():
    model, batch = _seq2seq(0), _batch()
    with pytest.raises(TypeError, match="model must be a Seq2Seq, got Transformer"):
        seq2seq_decoder(_transformer(0), batch.src, batch.src_lengths)
    with pytest.raises(TypeError, match="model must be a Transformer, got Seq2Seq"):
        transformer_decoder(model, batch.src, bos=1, eos=2)
    with pytest.raises(ValueError, match="src_lengths must lie in"):
        seq2seq_decoder(model, batch.src, batch.src_lengths + 10)
    with pytest.raises(ValueError, match="eos must be at most 4"):
        transformer_decoder(_transformer(0), batch.src, bos=1, eos=9)


def test_normalised_score_validates_its_arguments():
    lp = torch.zeros(2, 3, dtype=F64)
    with pytest.raises(ValueError, match=r"length must have the shape of log_prob \(2, 3\), "
                                         r"got \(3, 2\)"):
        normalised_score(lp, torch.ones(3, 2, dtype=torch.long), 1.0)
    with pytest.raises(ValueError, match="length must be at least 1 token, got 0"):
        normalised_score(lp, torch.zeros(2, 3, dtype=torch.long), 1.0)
    for dtype in (torch.bool, F64):
        with pytest.raises(TypeError, match="length must be an integer tensor"):
            normalised_score(lp, torch.ones(2, 3, dtype=dtype), 1.0)
    with pytest.raises(TypeError, match="log_prob must be a floating-point tensor"):
        normalised_score(lp.long(), torch.ones(2, 3, dtype=torch.long), 1.0)
    with pytest.raises(ValueError, match="alpha must be at least 0.0"):
        normalised_score(lp, torch.ones(2, 3, dtype=torch.long), -0.5)


def _loop_beam_search(table: torch.Tensor, K: int, L: int, alpha: float) -> list[tuple]:
    """Equation eq-dec-beam one hypothesis at a time: the reference for any beam size.

    ``table[b, t, y_prev]`` holds the log-probabilities of token t + 1 of source b."""
    found = []
    for b in range(table.shape[0]):
        beams = [((), 0.0)]  # (tokens, log p)
        for t in range(L):
            candidates = []
            for tokens, log_p in beams:
                if tokens and tokens[-1] == 2:  # finished: <pad> at no cost
                    candidates.append((tokens, log_p))
                    continue
                prev = tokens[-1] if tokens else 1
                candidates += [(tokens + (v,), log_p + float(table[b, t, prev, v]))
                               for v in range(table.shape[-1])]
            candidates.sort(key=lambda c: c[1] / len(c[0]) ** alpha, reverse=True)
            beams = candidates[:K]
            if all(tokens[-1] == 2 for tokens, _ in beams):
                break
        found.append(beams)
    return found


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(1, 5), L=st.integers(1, 4),
       V=st.integers(3, 5), alpha=st.sampled_from([0.0, 0.5, 1.0, 2.0]),
       sharp=st.sampled_from([0.5, 2.0]))
def test_batched_beam_search_equals_the_loop_over_hypotheses(seed, K, L, V, alpha, sharp):
    gen = torch.Generator().manual_seed(seed)
    table = torch.log_softmax(sharp * torch.randn(3, L, V, V, generator=gen, dtype=F64), -1)

    def step(y_prev, state):  # state (N, 2): the source and the step
        return table[state[:, 0], state[:, 1], y_prev], state + torch.tensor([0, 1])

    start = torch.stack([torch.arange(3), torch.zeros(3, dtype=torch.long)], 1)
    decoder = StepDecoder(step, start, 3, V, bos=1, eos=2, pad=0)
    result = beam_search(decoder, K, L, length_penalty=alpha)
    for b, beams in enumerate(_loop_beam_search(table, K, L, alpha)):
        got = [_hypothesis(result.tokens[b, k], int(result.lengths[b, k]))
               for k in range(len(beams))]
        assert got == [tokens for tokens, _ in beams]
        torch.testing.assert_close(result.log_probs[b, :len(beams)],
                                   torch.tensor([lp for _, lp in beams], dtype=F64))
        assert bool(torch.isinf(result.scores[b, len(beams):]).all())


# ---------------------------------------------- properties at random sizes (hypothesis)


def _markov(seed: int, B: int, V: int, sharp: float) -> tuple[decoding.StepDecoder, torch.Tensor]:
    """A decoder whose next token depends on the source and the previous token only."""
    gen = torch.Generator().manual_seed(seed)
    table = sharp * torch.randn(B, V, V, generator=gen, dtype=F64)  # (B, y_prev, y)

    def step(y_prev, state):
        return table[state[:, 0], y_prev], state  # state: the source's row, (N, 1)

    return decoding.StepDecoder(step, torch.arange(B)[:, None], B, V, 1, 2, 0), table


@covers("seqlearn.decoding.StepDecoder", "seqlearn.decoding.BeamResult",
        "seqlearn.decoding.beam_search", "seqlearn.decoding.normalised_score")
@given(seed=seeds, B=st.integers(1, 3), V=st.integers(3, 4), max_len=st.integers(1, 3),
       alpha=st.sampled_from([0.0, 0.5, 1.0]), sharp=st.sampled_from([1.0, 3.0]))
def test_enough_beams_find_the_exhaustive_optimum(seed, B, V, max_len, alpha, sharp):
    decoder, table = _markov(seed, B, V, sharp)
    result = decoding.beam_search(decoder, V ** max_len, max_len, length_penalty=alpha)
    assert isinstance(result, decoding.BeamResult)
    lp = torch.log_softmax(table, -1)  # (B, V, V)
    for b in range(B):  # the loop reference: every sequence, scored token by token
        best = -torch.inf
        for n in range(1, max_len + 1):
            for seq in itertools.product(range(V), repeat=n):
                if 2 in seq[:-1] or (seq[-1] != 2 and n < max_len):
                    continue
                prev = (1, *seq[:-1])
                log_p = sum(lp[b, p, y] for p, y in zip(prev, seq))
                best = max(best, float(log_p) / n ** alpha)
        assert abs(float(result.scores[b, 0]) - best) < 1e-9
        assert abs(float(result.best[b].shape[0]) - result.tokens.shape[-1]) == 0
    greedy = decoding.beam_search(decoder, 1, max_len, length_penalty=alpha)
    assert bool((greedy.scores[:, 0] <= result.scores[:, 0] + 1e-12).all())
    n = torch.randint(1, 5, (B, 2))
    torch.testing.assert_close(decoding.normalised_score(result.log_probs[:, :2].clamp(-50), n,
                                                         alpha),
                               result.log_probs[:, :2].clamp(-50) / n.double() ** alpha)
    refuses(decoding.beam_search, decoder, 0, max_len)
    refuses(decoding.beam_search, decoder, 1, max_len, length_penalty=-alpha - 1)
    refuses(decoding.StepDecoder, decoder.step, torch.zeros(B + 1, 1), B, V, 1, 2, 0)
    refuses(decoding.normalised_score, result.log_probs, n[:, :1], alpha)


@covers("seqlearn.decoding.seq2seq_decoder", "seqlearn.decoding.transformer_decoder")
@given(seed=seeds, max_len=st.integers(1, 5))
def test_one_beam_of_each_adapter_is_its_models_greedy_decoding(seed, max_len):
    torch.manual_seed(seed % 1000)
    rng = torch.Generator().manual_seed(seed)
    pairs = [("".join("abcd"[int(i)] for i in torch.randint(0, 4, (int(n),), generator=rng)),
              "") for n in torch.randint(1, 6, (3,), generator=rng)]
    batch = seq2seq_batch(pairs, SRC, TGT)
    s2s = Seq2Seq(SRC, TGT, 4, score="additive", embedding=3).double()
    want, _ = s2s.greedy_decode(batch.src, batch.src_lengths, max_len)
    decoder = decoding.seq2seq_decoder(s2s, batch.src, batch.src_lengths)
    assert torch.equal(decoding.beam_search(decoder, 1, max_len).best, want)
    tf = Transformer(len(SRC), len(TGT), 8, 2, 1, 16, max_len=8).double()
    want = tf.greedy_decode(batch.src, max_len, TGT.bos, TGT.eos, src_mask=batch.src_mask)
    decoder = decoding.transformer_decoder(tf, batch.src, bos=TGT.bos, eos=TGT.eos,
                                           src_mask=batch.src_mask)
    assert torch.equal(decoding.beam_search(decoder, 1, max_len).best, want)
    refuses(decoding.seq2seq_decoder, tf, batch.src, batch.src_lengths)
    refuses(decoding.transformer_decoder, s2s, batch.src, bos=1, eos=2)
    refuses(decoding.beam_search, decoder, 1, 9)  # more steps than the model's positions
