"""A convolutional encoder against the GRU encoder, by input length, over several seeds.

    .venv/bin/python bench/study_conv_encoder.py                       # seeds 0-4
    .venv/bin/python bench/study_conv_encoder.py --seeds 0 1 2 --models gru conv:1:3 \\
        conv:3:3 --hidden 96 --steps 400                                # the longer budget

The task and the recipe are those of the attention chapter and
``bench/study_attention_length.py`` at the chapter's budget: reverse a random string of 5-20
letters (``seqlearn.data.string_pairs``), ``seqlearn.seq2seq.Seq2Seq`` with Bahdanau's
additive attention, hidden 64 (32 per direction), embeddings of 32, batch 64, Adam
(learning rate 5e-3), gradients clipped to norm 1, 200 steps; data from
``numpy.random.default_rng(seed)``, weights from ``seed_all(seed)``; every run is tested on
the same 2000 strings by greedy decoding (exact match of the whole reversed string). Only
the encoder changes:

- ``gru``: the bidirectional GRU (the chapter's model);
- ``conv:L:k``: ``encoder=`` two causal ``seqlearn.conv_encoder.ConvEncoder`` stacks of
  ``L`` residual layers with kernel size ``k``, one reading the source forwards and one
  backwards, so that ``h_i`` reads ``1 + L(k - 1)`` characters on each side of ``i``
  (``i`` included); ``encoder="conv"`` is ``conv:3:3``.

Prints one line per (model, seed): exact match by length bin and CPU milliseconds per
training step; then mean +- sd [min, max] over the seeds per bin, in how many seeds each
convolutional encoder beat the GRU in each bin, and the mean per single length.

What the runs show (the attention chapter's *Going further* quotes them): at the chapter's
budget the GRU has the best mean exact match in every length group, and the wider a
convolutional encoder's receptive field, the lower its accuracy at 17-20 letters (0.48,
0.38 and 0.20, and 0.09 for 2, 4, 4 and 6 characters on either side); at the longer budget
the GRU beat both convolutional encoders in every seed and every length group, by about
0.1 at 13-16 letters and 0.17 or more at 17-20, and the three-layer stack has caught up
with the one-layer stack.

Measured on the book's 2-core machine (torch 2.13 CPU, one thread, other jobs running: the
CPU times are rough). Output of the default command (about 5 minutes)::

          gru seed 0: all 0.634  5-8: 0.851  9-12: 0.769  13-16: 0.631  17-20: 0.282  (57 ms/step)
          gru seed 1: all 0.778  5-8: 0.913  9-12: 0.849  13-16: 0.782  17-20: 0.566  (50 ms/step)
          gru seed 2: all 0.837  5-8: 0.921  9-12: 0.893  13-16: 0.837  17-20: 0.695  (51 ms/step)
          gru seed 3: all 0.781  5-8: 0.890  9-12: 0.867  13-16: 0.814  17-20: 0.547  (54 ms/step)
          gru seed 4: all 0.732  5-8: 0.907  9-12: 0.791  13-16: 0.714  17-20: 0.516  (49 ms/step)
     conv:1:3 seed 0: all 0.576  5-8: 0.718  9-12: 0.696  13-16: 0.583  17-20: 0.302  (46 ms/step)
     conv:1:3 seed 1: all 0.777  5-8: 0.882  9-12: 0.861  13-16: 0.763  17-20: 0.603  (47 ms/step)
     conv:1:3 seed 2: all 0.786  5-8: 0.886  9-12: 0.847  13-16: 0.780  17-20: 0.630  (46 ms/step)
     conv:1:3 seed 3: all 0.663  5-8: 0.795  9-12: 0.750  13-16: 0.650  17-20: 0.457  (46 ms/step)
     conv:1:3 seed 4: all 0.656  5-8: 0.797  9-12: 0.773  13-16: 0.642  17-20: 0.412  (51 ms/step)
     conv:2:3 seed 0: all 0.667  5-8: 0.872  9-12: 0.859  13-16: 0.633  17-20: 0.305  (62 ms/step)
     conv:2:3 seed 1: all 0.638  5-8: 0.745  9-12: 0.765  13-16: 0.623  17-20: 0.416  (55 ms/step)
     conv:2:3 seed 2: all 0.730  5-8: 0.851  9-12: 0.849  13-16: 0.727  17-20: 0.490  (55 ms/step)
     conv:2:3 seed 3: all 0.712  5-8: 0.807  9-12: 0.843  13-16: 0.723  17-20: 0.469  (56 ms/step)
     conv:2:3 seed 4: all 0.590  5-8: 0.793  9-12: 0.736  13-16: 0.593  17-20: 0.233  (56 ms/step)
     conv:3:3 seed 0: all 0.286  5-8: 0.629  9-12: 0.429  13-16: 0.100  17-20: 0.000  (56 ms/step)
     conv:3:3 seed 1: all 0.417  5-8: 0.710  9-12: 0.553  13-16: 0.347  17-20: 0.064  (62 ms/step)
     conv:3:3 seed 2: all 0.558  5-8: 0.841  9-12: 0.688  13-16: 0.496  17-20: 0.210  (61 ms/step)
     conv:3:3 seed 3: all 0.566  5-8: 0.781  9-12: 0.742  13-16: 0.551  17-20: 0.187  (63 ms/step)
     conv:3:3 seed 4: all 0.187  5-8: 0.528  9-12: 0.221  13-16: 0.015  17-20: 0.000  (64 ms/step)
     conv:1:5 seed 0: all 0.630  5-8: 0.772  9-12: 0.785  13-16: 0.602  17-20: 0.360  (54 ms/step)
     conv:1:5 seed 1: all 0.281  5-8: 0.580  9-12: 0.447  13-16: 0.104  17-20: 0.004  (52 ms/step)
     conv:1:5 seed 2: all 0.209  5-8: 0.505  9-12: 0.284  13-16: 0.055  17-20: 0.004  (55 ms/step)
     conv:1:5 seed 3: all 0.662  5-8: 0.803  9-12: 0.813  13-16: 0.625  17-20: 0.407  (59 ms/step)
     conv:1:5 seed 4: all 0.572  5-8: 0.772  9-12: 0.757  13-16: 0.527  17-20: 0.228  (55 ms/step)

    exact match by length, mean +- sd [min, max] over seeds [0, 1, 2, 3, 4]
        model parameters                       5-8                      9-12                     13-16                     17-20
          gru      62717  0.90 +- 0.03 [0.85, 0.92]  0.83 +- 0.05 [0.77, 0.89]  0.76 +- 0.08 [0.63, 0.84]  0.52 +- 0.15 [0.28, 0.70]
     conv:1:3      58365  0.82 +- 0.07 [0.72, 0.89]  0.79 +- 0.07 [0.70, 0.86]  0.68 +- 0.08 [0.58, 0.78]  0.48 +- 0.14 [0.30, 0.63]
     conv:2:3      64573  0.81 +- 0.05 [0.75, 0.87]  0.81 +- 0.06 [0.74, 0.86]  0.66 +- 0.06 [0.59, 0.73]  0.38 +- 0.11 [0.23, 0.49]
     conv:3:3      70781  0.70 +- 0.12 [0.53, 0.84]  0.53 +- 0.21 [0.22, 0.74]  0.30 +- 0.24 [0.02, 0.55]  0.09 +- 0.10 [0.00, 0.21]
     conv:1:5      62461  0.69 +- 0.13 [0.51, 0.80]  0.62 +- 0.24 [0.28, 0.81]  0.38 +- 0.28 [0.05, 0.62]  0.20 +- 0.19 [0.00, 0.41]

    seeds in which the encoder beat the GRU, per bin (ties count as not):
     conv:1:3  5-8: 0/5  9-12: 1/5  13-16: 0/5  17-20: 2/5
     conv:2:3  5-8: 1/5  9-12: 1/5  13-16: 1/5  17-20: 1/5
     conv:3:3  5-8: 0/5  9-12: 0/5  13-16: 0/5  17-20: 0/5
     conv:1:5  5-8: 0/5  9-12: 1/5  13-16: 0/5  17-20: 1/5

    mean exact match per length     5     6     7     8     9    10    11    12    13    14    15    16    17    18    19    20
                             gru  0.87  0.92  0.91  0.89  0.87  0.88  0.81  0.79  0.77  0.77  0.76  0.72  0.68  0.59  0.47  0.37
                        conv:1:3  0.80  0.82  0.83  0.82  0.80  0.81  0.77  0.77  0.72  0.74  0.67  0.61  0.52  0.54  0.47  0.41
                        conv:2:3  0.78  0.82  0.83  0.82  0.84  0.84  0.81  0.75  0.73  0.71  0.64  0.56  0.47  0.43  0.35  0.30
                        conv:3:3  0.69  0.74  0.65  0.71  0.64  0.56  0.48  0.43  0.39  0.35  0.28  0.18  0.16  0.11  0.06  0.04
                        conv:1:5  0.65  0.72  0.69  0.68  0.68  0.64  0.62  0.53  0.45  0.40  0.36  0.32  0.26  0.22  0.19  0.14

and of ``--seeds 0 1 2 --models gru conv:1:3 conv:3:3 --hidden 96 --steps 400`` (the
longer budget of ``bench/study_attention_length.py``, about 10 minutes)::

          gru seed 0: all 0.989  5-8: 0.994  9-12: 0.988  13-16: 0.987  17-20: 0.988  (84 ms/step)
          gru seed 1: all 0.969  5-8: 0.990  9-12: 0.988  13-16: 0.979  17-20: 0.916  (76 ms/step)
          gru seed 2: all 0.957  5-8: 0.979  9-12: 0.978  13-16: 0.981  17-20: 0.885  (74 ms/step)
     conv:1:3 seed 0: all 0.878  5-8: 0.969  9-12: 0.928  13-16: 0.884  17-20: 0.730  (69 ms/step)
     conv:1:3 seed 1: all 0.899  5-8: 0.952  9-12: 0.942  13-16: 0.886  17-20: 0.815  (73 ms/step)
     conv:1:3 seed 2: all 0.869  5-8: 0.959  9-12: 0.950  13-16: 0.833  17-20: 0.733  (78 ms/step)
     conv:3:3 seed 0: all 0.851  5-8: 0.942  9-12: 0.930  13-16: 0.839  17-20: 0.689  (80 ms/step)
     conv:3:3 seed 1: all 0.913  5-8: 0.975  9-12: 0.976  13-16: 0.909  17-20: 0.790  (79 ms/step)
     conv:3:3 seed 2: all 0.865  5-8: 0.957  9-12: 0.962  13-16: 0.847  17-20: 0.691  (76 ms/step)

    exact match by length, mean +- sd [min, max] over seeds [0, 1, 2]
        model parameters                       5-8                      9-12                     13-16                     17-20
          gru     124925  0.99 +- 0.01 [0.98, 0.99]  0.98 +- 0.01 [0.98, 0.99]  0.98 +- 0.00 [0.98, 0.99]  0.93 +- 0.05 [0.88, 0.99]
     conv:1:3     118397  0.96 +- 0.01 [0.95, 0.97]  0.94 +- 0.01 [0.93, 0.95]  0.87 +- 0.03 [0.83, 0.89]  0.76 +- 0.05 [0.73, 0.81]
     conv:3:3     146237  0.96 +- 0.02 [0.94, 0.98]  0.96 +- 0.02 [0.93, 0.98]  0.86 +- 0.04 [0.84, 0.91]  0.72 +- 0.06 [0.69, 0.79]

    seeds in which the encoder beat the GRU, per bin (ties count as not):
     conv:1:3  5-8: 0/3  9-12: 0/3  13-16: 0/3  17-20: 0/3
     conv:3:3  5-8: 0/3  9-12: 0/3  13-16: 0/3  17-20: 0/3

    mean exact match per length     5     6     7     8     9    10    11    12    13    14    15    16    17    18    19    20
                             gru  1.00  0.98  0.99  0.98  0.99  0.98  0.97  0.99  0.98  0.99  0.99  0.96  0.99  0.95  0.93  0.87
                        conv:1:3  0.95  0.97  0.96  0.96  0.94  0.95  0.93  0.94  0.92  0.88  0.86  0.81  0.81  0.78  0.76  0.70
                        conv:3:3  0.96  0.97  0.96  0.95  0.96  0.98  0.94  0.96  0.90  0.88  0.86  0.82  0.81  0.74  0.71  0.65

Fair baselines: every run above uses the recipe's learning rate 5e-3. ``--lr`` runs the study
at another rate; the grid 2e-3, 5e-3, 1e-2, 2e-2 on seeds 0-2 at the chapter's budget
(output in bench/results/study_conv_encoder.lr_grid.native.txt, native numerics only; the
5e-3 lines are those above)::

    for lr in 2e-3 1e-2; do .venv/bin/python bench/study_conv_encoder.py --seeds 0 1 2 \
        --models gru conv:1:3 conv:3:3 --lr $lr; done
    .venv/bin/python bench/study_conv_encoder.py --seeds 0 1 2 --models gru conv:3:3 --lr 2e-2

Mean exact match over seeds 0-2 (all lengths): gru 0.367 / 0.750 / 0.668 / 0.309 at 2e-3 /
5e-3 / 1e-2 / 2e-2; conv:1:3 0.026 / 0.713 / 0.540 (2e-2 not run); conv:3:3 0.042 / 0.420 /
0.608 / 0.486. So the GRU and conv:1:3 do best at 5e-3 and conv:3:3 at 1e-2. At the best
rates, per bin 5-8 / 9-12 / 13-16 / 17-20: gru 0.895 / 0.837 / 0.750 / 0.514, conv:1:3
0.829 / 0.801 / 0.709 / 0.512, conv:3:3 0.827 / 0.738 / 0.566 / 0.303; in seed 0 the tuned conv:3:3 beat the GRU
(5e-3) in every bin.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from seqlearn.conv_encoder import ConvEncoder
from seqlearn.data.strings import LETTERS, string_pairs
from seqlearn.data.vocab import Vocab, seq2seq_batch
from seqlearn.seeding import seed_all
from seqlearn.seq2seq import Seq2Seq, greedy_exact_match
from seqlearn.train import fit_seq2seq

HIDDEN, EMBEDDING, BATCH, LR, STEPS = 64, 32, 64, 5e-3, 200
MIN_LEN, MAX_LEN = 5, 20
BINS = ((5, 8), (9, 12), (13, 16), (17, 20))
TEST_SEED, TEST_SIZE = 10_000, 2000


def encoder(spec: str):
    """``"gru"`` or ``"conv:L:k"`` as the ``encoder=`` argument of Seq2Seq."""
    if spec == "gru":
        return "gru"
    _, layers, k = spec.split(":")
    return lambda E, H: ConvEncoder(E, H, layers=int(layers), kernel_size=int(k),
                                    causal=True)


def run(spec: str, seed: int, hidden: int = HIDDEN, steps: int = STEPS,
        lr: float = LR) -> tuple[np.ndarray, float, int]:
    """Exact match per test string, CPU seconds per training step, parameter count."""
    vocab = Vocab(LETTERS)
    train = string_pairs(steps * BATCH, np.random.default_rng(seed), min_len=MIN_LEN,
                         max_len=MAX_LEN)
    test = string_pairs(TEST_SIZE, np.random.default_rng(TEST_SEED), min_len=MIN_LEN,
                        max_len=MAX_LEN)
    seed_all(seed)
    model = Seq2Seq(vocab, vocab, hidden, score="additive", embedding=EMBEDDING,
                    encoder=encoder(spec))
    start = time.process_time()
    fit_seq2seq(model, lambda k: seq2seq_batch(train[k * BATCH:(k + 1) * BATCH], vocab,
                                               vocab), steps, lr=lr)
    cpu = (time.process_time() - start) / steps
    model.eval()
    ok = greedy_exact_match(model, seq2seq_batch(test, vocab, vocab)).numpy()
    return ok, cpu, sum(p.numel() for p in model.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--models", nargs="+",
                        default=["gru", "conv:1:3", "conv:2:3", "conv:3:3", "conv:1:5"])
    parser.add_argument("--hidden", type=int, default=HIDDEN)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--lr", type=float, default=LR, help="Adam's learning rate")
    args = parser.parse_args()
    torch.set_num_threads(1)
    test = string_pairs(TEST_SIZE, np.random.default_rng(TEST_SEED), min_len=MIN_LEN,
                        max_len=MAX_LEN)
    lengths = np.array([len(s) for s, _ in test])
    names = [f"{lo}-{hi}" for lo, hi in BINS]
    per_bin: dict[str, np.ndarray] = {}
    per_length: dict[str, np.ndarray] = {}
    params: dict[str, int] = {}
    for spec in args.models:
        bins_rows, length_rows = [], []
        for seed in args.seeds:
            ok, cpu, params[spec] = run(spec, seed, args.hidden, args.steps, args.lr)
            bins = [float(ok[(lengths >= lo) & (lengths <= hi)].mean()) for lo, hi in BINS]
            bins_rows.append(bins)
            length_rows.append([float(ok[lengths == n].mean())
                                for n in range(MIN_LEN, MAX_LEN + 1)])
            print(f"{spec:>9} seed {seed}: all {ok.mean():.3f}  " + "  ".join(
                f"{n}: {a:.3f}" for n, a in zip(names, bins))
                  + f"  ({1000 * cpu:.0f} ms/step)", flush=True)
        per_bin[spec], per_length[spec] = np.array(bins_rows), np.array(length_rows)
    print(f"\nexact match by length, mean +- sd [min, max] over seeds {args.seeds}")
    print(f"{'model':>9} {'parameters':>10}  " + "  ".join(f"{n:>24}" for n in names))
    for spec, rows in per_bin.items():
        sd = [statistics.stdev(col) if len(col) > 1 else 0.0 for col in rows.T]
        cells = [f"{rows[:, k].mean():.2f} +- {sd[k]:.2f} "
                 f"[{rows[:, k].min():.2f}, {rows[:, k].max():.2f}]" for k in range(len(BINS))]
        print(f"{spec:>9} {params[spec]:>10}  " + "  ".join(f"{c:>24}" for c in cells))
    if "gru" in per_bin:
        print("\nseeds in which the encoder beat the GRU, per bin (ties count as not):")
        for spec, rows in per_bin.items():
            if spec != "gru":
                wins = (rows > per_bin["gru"]).sum(0)
                print(f"{spec:>9}  " + "  ".join(f"{n}: {w}/{len(rows)}"
                                                 for n, w in zip(names, wins)))
    print("\nmean exact match per length " + " ".join(
        f"{n:>5}" for n in range(MIN_LEN, MAX_LEN + 1)))
    for spec, rows in per_length.items():
        print(f"{spec:>28} " + " ".join(f"{m:5.2f}" for m in rows.mean(0)))


if __name__ == "__main__":
    main()
