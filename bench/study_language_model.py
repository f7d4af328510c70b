"""Character language models on Python's language reference: seeds and two budgets.

The study behind the chapter *Language models on real text*
(chapters/language_model.ipynb). An add-k n-gram, an Elman RNN, an LSTM and a causal
Transformer of about 63,000 parameters each are trained on the same windows (batch 32,
64 characters, Adam with the learning rate decayed linearly to 0; the Transformer warms
up over its first 40 steps) for the chapter's budget of 300 steps and for five times
that, and scored by held-out bits per character. The n-gram's order and pseudo-count,
and each network's learning rate, were chosen on validation text taken from the
training topics (``--sweep``), never on the held-out text. For the LSTM the study
also measures what the chapter shows with seed 0: greedy continuations that end in a
loop, how an n-gram judge scores continuations at three temperatures, and the cells that
correlate best with three features of the text.

Commands (one thread; CPU seconds on the book's 2-core machine, shared with other jobs):

    .venv/bin/python bench/study_language_model.py           # 6 min CPU
    .venv/bin/python bench/study_language_model.py --sweep   # 1.5 min CPU

Output of the first command (Python 3.11.7)::

    text fingerprint 219be7960ea7; 422297 training and 42750 held-out characters,
    V = 103
    n-gram: n = 5, k = 0.01 chosen on validation; held-out 2.167 bpc

    Held-out bits per character (mean, min-max over seeds 0, 1, 2); n-gram 2.167
    | model | parameters | 300 steps | 1500 steps | CPU s per 100 steps |
    |---|---|---|---|---|
    | Elman RNN | 63,477 | 2.417 (2.362-2.470) | 2.049 (2.041-2.057) | 1.8 |
    | LSTM | 63,207 | 2.347 (2.333-2.371) | 2.048 (2.035-2.069) | 1.3 |
    | Transformer | 63,527 | 2.649 (2.618-2.677) | 2.053 (2.038-2.070) | 3.4 |

    per seed (seed 0, 1, 2), 300 steps:  Elman 2.470 2.362 2.419, LSTM 2.337 2.333
    2.371, Transformer 2.653 2.677 2.618; 1500 steps: Elman 2.057 2.041 2.048,
    LSTM 2.035 2.041 2.069, Transformer 2.052 2.070 2.038

    LSTM, per seed: greedy loops of 200 continuations; n-gram judge bits of 128
    characters after a 64-character prompt (true text, tau = 0, 0.5, 1); best cell
    (index, r) per feature
      300 steps, seed 0: loops 200/200; judge real 2.26, tau 0 0.89, 0.5 1.54, 1 4.34;
        inside quotes c57 r=+0.32; indented c62 r=+0.32; line position c65 r=-0.22
      300 steps, seed 1: loops 200/200; judge real 2.32, tau 0 0.79, 0.5 1.60, 1 4.30;
        inside quotes c22 r=-0.37; indented c12 r=+0.46; line position c55 r=-0.20
      300 steps, seed 2: loops 200/200; judge real 2.16, tau 0 0.90, 0.5 1.65, 1 4.59;
        inside quotes c67 r=+0.21; indented c36 r=+0.23; line position c69 r=+0.32
      1500 steps, seed 0: loops 200/200; judge real 2.26, tau 0 0.92, 0.5 1.13, 1 3.02;
        inside quotes c57 r=+0.38; indented c62 r=+0.24; line position c84 r=-0.46
      1500 steps, seed 1: loops 200/200; judge real 2.32, tau 0 0.89, 0.5 1.20, 1 3.19;
        inside quotes c22 r=-0.40; indented c22 r=-0.30; line position c12 r=-0.46
      1500 steps, seed 2: loops 200/200; judge real 2.16, tau 0 0.89, 0.5 1.14, 1 3.10;
        inside quotes c87 r=-0.22; indented c27 r=+0.24; line position c69 r=+0.31

Under the perturbed numerics (``make study-perturbed STUDY=bench/study_language_model.py``;
output in bench/results/study_language_model.perturbed.txt; 31 min CPU, the scalar kernels
taking 3 to 5 times the native CPU seconds per step)::

    Held-out bits per character (mean, min-max over seeds 0, 1, 2); n-gram 2.167
    | model | parameters | 300 steps | 1500 steps | CPU s per 100 steps |
    |---|---|---|---|---|
    | Elman RNN | 63,477 | 2.417 (2.362-2.470) | 2.052 (2.043-2.057) | 8.9 |
    | LSTM | 63,207 | 2.347 (2.332-2.371) | 2.049 (2.029-2.077) | 3.7 |
    | Transformer | 63,527 | 2.648 (2.622-2.673) | 2.057 (2.052-2.065) | 17.3 |

    per seed, 300 steps: Elman 2.470 2.362 2.419, LSTM 2.336 2.332 2.371, Transformer
    2.648 2.673 2.622; 1500 steps: Elman 2.057 2.043 2.056, LSTM 2.029 2.042 2.077,
    Transformer 2.052 2.065 2.053

    LSTM: greedy loops 200/200 in every run but 1500 steps, seed 1 (40/200); judge at
    300 steps: real 2.16-2.32, tau 0 0.79-0.91, 0.5 1.52-1.65, 1 4.33-4.60; at 1500
    steps: tau 0 0.87-0.88, 0.5 1.14-1.19, 1 3.06-3.21; largest |r| of a best cell 0.47
    (indented, 300 steps, seed 1)

Each result moved by at most 0.005 bits at 300 steps and 0.015 at 1500 steps; at 300
steps the order within each seed stays n-gram < LSTM < Elman RNN < Transformer, the
LSTM's lead over the Elman RNN 0.13, 0.03 and 0.05 bits as natively (within the Elman
RNN's seed spread of 0.11 bits), the Transformer 0.18 to 0.31 bits behind the worse
recurrent network.

Issue 27 added, at the chapter's budget: interpolated Kneser-Ney (order and discount
chosen on validation), each network read as one stream (``held_out_bits(...,
carry=True)``: the recurrent networks carry their state across the held-out text, the
Transformer reads each 32 characters after the 32 before them), the loops at tau = 0.5
(period, what repeats, whether the prompt began them) and the judge per block of 16
characters. ``--budgets 300`` (native: bench/results/study_language_model.300.native.txt;
perturbed: study_language_model.300.perturbed.txt) printed, natively::

    Kneser-Ney: n = 9, D = 0.75 chosen on validation; held-out 1.561 bpc
    fresh windows / one stream, seeds 0, 1, 2: Elman 2.470 2.362 2.423 / 2.431 2.316
    2.380; LSTM 2.337 2.333 2.371 / 2.296 2.292 2.332; Transformer 2.657 2.669 2.620 /
    2.630 2.642 2.595 (gains 0.025 to 0.046)
    tau 0.5 loops 51, 42, 49: all of period 1 and of spaces or border characters;
    23, 21, 30 running from inside the prompt
    judge per 16 characters at tau 1, first and last block: 4.24 4.51, 4.21 4.37,
    4.43 4.52 (true text 2.27 2.23, 2.31 2.47, 2.21 2.17)

(The Transformer's fresh-window results differ from the run above in the third decimal:
another run on the shared machine, same code.)

Output of ``--sweep`` (held-out bits on the validation text after 300 steps, seed 0)::

    validation: 8 topics, 104390 characters
    | model | lr 0.005 | lr 0.01 | lr 0.02 | lr 0.04 |
    |---|---|---|---|---|
    | Elman RNN | 2.636 | 2.313 | 2.613 | 3.147 |
    | LSTM | 2.956 | 2.595 | 2.275 | 2.310 |
    | Transformer | 3.052 | 2.756 | 2.610 | 2.789 |

Under the perturbed numerics (``make study-perturbed STUDY=bench/study_language_model.py
ARGS=--sweep``; output in bench/results/study_language_model.sweep.perturbed.txt; 9 min
CPU) the same rates win: Elman RNN 2.636 2.313 2.655 3.100, LSTM 2.956 2.595 2.275
2.315, Transformer 3.052 2.756 2.623 2.791.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from seqlearn.char_text import (CharVocab, indentation, inside_quotes, line_position,
                                random_windows, reference_topics, split_reference_text,
                                text_fingerprint)
from seqlearn.language_model import (CausalTransformerLM, RecurrentLM, held_out_bits,
                                     language_model_loss, lstm_gates, parameter_count)
from seqlearn.ngram import KneserNeyModel, NGramModel
from seqlearn.sampling import generate
from seqlearn.seeding import seed_all
from seqlearn.train import fit
from seqlearn.warmup import linear_warmup_rate

BATCH, LENGTH, WARMUP = 32, 64, 40
# name: (constructor, learning rate, warm-up steps); about 63,000 parameters each
MODELS = {
    "Elman RNN": (lambda V: RecurrentLM(V, 32, 186, cell="elman", fast=True), 0.01, 0),
    "LSTM": (lambda V: RecurrentLM(V, 32, 96, cell="lstm", fast=True), 0.02, 0),
    "Transformer": (lambda V: CausalTransformerLM(V, 48, 4, 2, 176, context=LENGTH),
                    0.02, WARMUP),
}
SWEEP = (0.005, 0.01, 0.02, 0.04)
NGRAM_ORDERS, NGRAM_KS = range(1, 8), (1.0, 0.1, 0.01, 0.001)
KN_ORDERS, KN_DISCOUNTS = (3, 5, 7, 9), (0.5, 0.75, 1.0)
BORDERS = set(" =-*+|~^")  # a space or a character tables and headings are drawn with


def data():
    split = split_reference_text()
    return split, CharVocab(split.train + split.held_out)


def validation_split(split):
    """Training topics split again (crc32 % 7): fit on one part, choose on the other."""
    topics = reference_topics()
    return split_reference_text({n: topics[n] for n in split.train_topics}, every=7)


def train(make, lr, warmup, steps, ids, vocab_size, seed):
    """The chapter's recipe: seed, build, Adam on random windows, linear decay."""
    seed_all(seed)
    model = make(vocab_size)
    windows = torch.Generator().manual_seed(seed)
    schedule = ((lambda k: linear_warmup_rate(k, steps, warmup)) if warmup
                else (lambda k: 1 - k / steps))
    fit(model, lambda k: random_windows(ids, BATCH, LENGTH, windows), steps, lr=lr,
        loss=language_model_loss, schedule=schedule)
    return model


def ngram_bits(train_ids, test_ids, n, k, start, V):
    log_p = NGramModel(n, V, k=k, start=start).fit(train_ids).log_likelihood(test_ids)
    return float(-log_p.mean() / math.log(2))


def best_on_validation(vocab, split, model_class, orders, values, knob):
    """(n, value) of ``model_class`` with the fewest bits on validation text cut from the
    training topics; ``knob`` names the smoothing attribute that ``values`` sets."""
    inner = validation_split(split)
    fit_ids, val_ids = vocab.encode(inner.train), vocab.encode(inner.held_out)
    start, V = vocab.stoi["\n"], len(vocab)
    scores = {}
    for n in orders:
        model = model_class(n, V, start=start).fit(fit_ids)
        for value in values:
            setattr(model, knob, value)
            scores[n, value] = float(-model.log_likelihood(val_ids).mean() / math.log(2))
    return min(scores, key=scores.get), scores


def best_ngram(vocab, split):
    """(n, k) of add-k smoothing with the fewest validation bits."""
    return best_on_validation(vocab, split, NGramModel, NGRAM_ORDERS, NGRAM_KS, "k")


def best_kneser_ney(vocab, split):
    """(n, D) of interpolated Kneser-Ney with the fewest validation bits."""
    return best_on_validation(vocab, split, KneserNeyModel, KN_ORDERS, KN_DISCOUNTS,
                              "discount")


def loop_of(row, tail=64):
    """(period, start) of the run that the last ``tail`` characters of ``row`` repeat,
    followed back as far as it goes; None if they do not repeat."""
    end = row[-tail:]
    for p in range(1, tail // 2 + 1):
        if all(end[i] == end[i + p] for i in range(tail - p)):
            start = len(row) - tail
            while start > 0 and row[start - 1] == row[start - 1 + p]:
                start -= 1
            return p, start
    return None


def loop_onset(row, tail=64):
    """Where a continuation settles into repeating itself: the start of ``loop_of(row)``,
    the first step from which it repeats with the period of its last ``tail`` characters
    to its end; None if they do not repeat."""
    found = loop_of(row, tail)
    return None if found is None else found[1]


def lstm_measures(model, vocab, split, judge, seed):
    held = vocab.encode(split.held_out)
    g = torch.Generator().manual_seed(1000 + seed)
    starts = torch.randint(0, len(held) - 192, (200,), generator=g)
    prompts = torch.stack([held[s: s + 64] for s in starts])  # (200, 64)
    greedy = generate(model, prompts, 128, temperature=0.0)
    loops = sum(loop_onset(row.tolist()) is not None for row in greedy)
    judged, blocks, half = {}, {}, None
    for tau in (0.0, 0.5, 1.0):
        out = greedy if tau == 0 else generate(model, prompts, 128, temperature=tau,
                                                generator=g)
        seqs = torch.cat([prompts, out], 1)
        bits = np.stack([-judge.log_likelihood(s)[63:].numpy() / math.log(2)
                         for s in seqs])  # (200, 128)
        judged[tau] = float(bits.mean())
        blocks[tau] = bits.reshape(200, 8, 16).mean((0, 2))
        if tau == 0.5:  # the loops: period, what repeats, whether the prompt began it
            found = [loop_of(s.tolist()) for s in seqs]
            found = [(p, st, vocab.decode(s[-p:])) for f, s in zip(found, seqs)
                     if f is not None for p, st in [f]]
            half = (len(found), sum(p == 1 for p, _, _ in found),
                    sum(set(u) <= BORDERS for _, _, u in found),
                    sum(st < 64 for _, st, _ in found))
    real = torch.stack([held[s: s + 192] for s in starts])
    bits = np.stack([-judge.log_likelihood(s)[63:].numpy() / math.log(2) for s in real])
    judged["real"] = float(bits.mean())
    blocks["real"] = bits.reshape(200, 8, 16).mean((0, 2))
    judged["blocks"], judged["half"] = blocks, half
    W = len(held) // 256
    gates = lstm_gates(model, held[: W * 256].view(W, 256))
    text = split.held_out[: W * 256]
    keep = (np.arange(W * 256) % 256) >= 32
    cells = gates.c.reshape(-1, gates.c.shape[-1]).numpy()[keep]
    best = {}
    for name, f in (("inside quotes", inside_quotes(text)),
                    ("indented", (indentation(text) > 0).astype(int)),
                    ("line position", line_position(text))):
        f = f[keep].astype(float)
        r = [np.corrcoef(cells[:, j], f)[0, 1] for j in range(cells.shape[1])]
        j = int(np.nanargmax(np.abs(r)))
        best[name] = (j, float(r[j]))
    return loops, judged, best


def sweep(split, vocab):
    inner = validation_split(split)
    fit_ids, val_ids = vocab.encode(inner.train), vocab.encode(inner.held_out)
    print(f"validation: {len(inner.held_out_topics)} topics, {len(inner.held_out)} "
          "characters")
    print("| model | " + " | ".join(f"lr {lr}" for lr in SWEEP) + " |")
    print("|---|" + "---|" * len(SWEEP))
    for name, (make, _, warmup) in MODELS.items():
        row = []
        for lr in SWEEP:
            model = train(make, lr, warmup, 300, fit_ids, len(vocab), 0)
            row.append(f"{held_out_bits(model, val_ids, LENGTH):.3f}")
        print(f"| {name} | " + " | ".join(row) + " |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--budgets", type=int, nargs="+", default=[300, 1500])
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    split, vocab = data()
    print(f"text fingerprint {text_fingerprint(split.train + split.held_out)}; "
          f"{len(split.train)} training and {len(split.held_out)} held-out characters, "
          f"V = {len(vocab)}")
    if args.sweep:
        sweep(split, vocab)
        return
    train_ids, held_ids = vocab.encode(split.train), vocab.encode(split.held_out)
    (n, k), _ = best_ngram(vocab, split)
    start = vocab.stoi["\n"]
    baseline = ngram_bits(train_ids, held_ids, n, k, start, len(vocab))
    print(f"n-gram: n = {n}, k = {k} chosen on validation; held-out {baseline:.3f} bpc")
    judge = NGramModel(n, len(vocab), k=k, start=start).fit(train_ids)
    (kn_n, kn_d), _ = best_kneser_ney(vocab, split)
    kn_bits = float(-KneserNeyModel(kn_n, len(vocab), discount=kn_d, start=start)
                    .fit(train_ids).log_likelihood(held_ids).mean() / math.log(2))
    print(f"Kneser-Ney: n = {kn_n}, D = {kn_d} chosen on validation; held-out "
          f"{kn_bits:.3f} bpc")
    results, extra = {}, {}
    for steps in args.budgets:
        for name, (make, lr, warmup) in MODELS.items():
            for seed in args.seeds:
                clock = time.process_time()
                model = train(make, lr, warmup, steps, train_ids, len(vocab), seed)
                seconds = time.process_time() - clock
                bits = held_out_bits(model, held_ids, LENGTH)
                carried = held_out_bits(model, held_ids, 32 if name == "Transformer"
                                        else 4096, carry=True)
                results[steps, name, seed] = (bits, seconds, parameter_count(model),
                                              carried)
                if name == "LSTM":
                    extra[steps, seed] = lstm_measures(model, vocab, split, judge, seed)
                print(f"  {steps} steps, {name}, seed {seed}: {bits:.3f} bpc, carrying "
                      f"the state {carried:.3f}, {seconds:.1f} s", flush=True)
    print("\nHeld-out bits per character (mean, min-max over seeds "
          f"{', '.join(map(str, args.seeds))}); n-gram {baseline:.3f}")
    print("| model | parameters | " + " | ".join(f"{s} steps" for s in args.budgets)
          + " | CPU s per 100 steps |")
    print("|---|---|" + "---|" * (len(args.budgets) + 1))
    for name in MODELS:
        cells = []
        for steps in args.budgets:
            bits = [results[steps, name, s][0] for s in args.seeds]
            cells.append(f"{np.mean(bits):.3f} ({min(bits):.3f}-{max(bits):.3f})")
        per = np.median([results[s, name, seed][1] / s * 100 for s in args.budgets
                         for seed in args.seeds])
        count = results[args.budgets[0], name, args.seeds[0]][2]
        print(f"| {name} | {count:,} | " + " | ".join(cells) + f" | {per:.1f} |")
    print("\nCarrying the state across the held-out text (Transformer: windows of 32 "
          "after the 32 characters before them), per seed")
    for steps in args.budgets:
        for name in MODELS:
            print(f"  {steps} steps, {name}: " + " ".join(
                f"{results[steps, name, s][3]:.3f}" for s in args.seeds)
                + "; gain over fresh windows " + " ".join(
                f"{results[steps, name, s][0] - results[steps, name, s][3]:.3f}"
                for s in args.seeds))
    print("\nLSTM, per seed: greedy loops of 200 continuations; n-gram judge bits of "
          "128 characters after a 64-character prompt (true text, tau = 0, 0.5, 1); "
          "best cell (index, r) per feature")
    for (steps, seed), (loops, judged, best) in sorted(extra.items()):
        cells = "; ".join(f"{f} c{j} r={r:+.2f}" for f, (j, r) in best.items())
        print(f"  {steps} steps, seed {seed}: loops {loops}/200; judge real "
              f"{judged['real']:.2f}, tau 0 {judged[0.0]:.2f}, 0.5 {judged[0.5]:.2f}, "
              f"1 {judged[1.0]:.2f}; {cells}")
        loops, period1, borders, in_prompt = judged["half"]
        print(f"    tau 0.5 loops {loops}: period 1 {period1}, spaces or border "
              f"characters {borders}, running from inside the prompt {in_prompt}")
        for key in ("real", 1.0, 0.5, 0.0):
            print(f"    judge per 16 characters, {key}: "
                  + " ".join(f"{b:.2f}" for b in judged["blocks"][key]))


if __name__ == "__main__":
    main()
