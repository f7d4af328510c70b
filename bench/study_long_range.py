"""First-token recall with an Elman RNN and with one self-attention head, over seeds and lengths.

    .venv/bin/python bench/study_long_range.py                # seeds 0-4, n = 8, 16, 32, 64

The setting of the self-attention chapter's long-range experiment
(seqlearn.long_range.LastStepReader): tokens from a vocabulary of 8, embeddings of 32, an RNN
with 64 units or one attention head with learned positions; 200 steps of Adam (3e-3, batches of
64, clipping at 1) on fresh batches from a generator seeded with the seed; recall measured on
1000 test sequences (seed 1000). For each seed, reader and length it prints the recall and the
ratio of the gradient norms reaching the first and the last embedding at initialisation
(mean over 100 test sequences). Then it checks the claims the chapter makes (at n = 64: RNN
ratio < 1e-10 and recall < 0.2, attention ratio > 1e-2 and recall > 0.99; attention recall
>= 0.99 at every length) and exits with status 1 if one fails for any seed. About a minute.

Output of the command above:

    seed   n | RNN: recall  grad 1/n at init | attention: recall  grad 1/n at init
       0   8 |       0.262           4.9e-03 |             1.000           6.2e-01
       0  16 |       0.146           1.9e-05 |             1.000           4.5e-01
       0  32 |       0.149           1.5e-10 |             1.000           2.7e-01
       0  64 |       0.116           1.5e-20 |             1.000           1.3e-01
       1   8 |       1.000           7.4e-03 |             1.000           5.0e-01
       1  16 |       0.114           3.4e-05 |             1.000           2.7e-01
       1  32 |       0.123           1.2e-09 |             1.000           2.9e-01
       1  64 |       0.123           2.1e-18 |             1.000           1.6e-01
       2   8 |       1.000           7.3e-03 |             1.000           6.2e-01
       2  16 |       0.144           3.8e-05 |             1.000           3.8e-01
       2  32 |       0.123           1.3e-09 |             1.000           3.1e-01
       2  64 |       0.116           1.9e-18 |             1.000           1.5e-01
       3   8 |       1.000           8.2e-03 |             1.000           5.2e-01
       3  16 |       0.143           3.2e-05 |             1.000           4.1e-01
       3  32 |       0.116           6.6e-10 |             1.000           2.9e-01
       3  64 |       0.130           4.2e-19 |             1.000           1.0e-01
       4   8 |       0.489           7.3e-03 |             1.000           5.5e-01
       4  16 |       0.142           2.9e-05 |             1.000           3.1e-01
       4  32 |       0.117           4.1e-10 |             1.000           1.9e-01
       4  64 |       0.115           1.4e-19 |             1.000           1.9e-01
    all claims held for seeds [0, 1, 2, 3, 4]

The RNN learned recall at n = 8 in three seeds of five and stayed below 0.15 from n = 16 on;
the attention reader reached 1.000 at every length and seed.

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_long_range.py`; output in
bench/results/study_long_range.perturbed.txt, 2 min of CPU time) every figure is the same as
above except the RNN's recall at seed 4, n = 8 (0.730 instead of 0.489): the RNN learned the
task at n = 8 in three seeds of five and came close in a fourth; every claim held in every seed.

Fair baseline (the RNN on a learning-rate grid; the attention reader already recalls 1.000 at
3e-3)::

    .venv/bin/python bench/study_long_range.py --lengths 16 32 64 --rnn-lrs 0.003 0.01 0.03

    RNN recall; columns: seeds [0, 1, 2, 3, 4]
      n  16  lr 0.003  0.146 0.114 0.144 0.143 0.142  mean 0.138
      n  16  lr 0.01   0.229 1.000 0.243 1.000 0.993  mean 0.693
      n  16  lr 0.03   0.388 0.239 0.622 0.534 0.546  mean 0.466
      n  16  best lr 0.01
      n  32  lr 0.003  0.149 0.123 0.123 0.116 0.117  mean 0.126
      n  32  lr 0.01   0.673 0.900 0.333 0.346 0.543  mean 0.559
      n  32  lr 0.03   0.192 0.136 0.235 0.123 0.349  mean 0.207
      n  32  best lr 0.01
      n  64  lr 0.003  0.116 0.123 0.116 0.130 0.115  mean 0.120
      n  64  lr 0.01   0.250 0.128 0.123 0.128 0.153  mean 0.156
      n  64  lr 0.03   0.234 0.131 0.105 0.133 0.141  mean 0.149
      n  64  best lr 0.01

(native numerics, output in bench/results/study_long_range.rnn_lr_grid.native.txt; not run
under the perturbed numerics). At 3e-3, the rate of the claims above, the RNN is at chance
beyond n = 8; at its best rate of the grid, 1e-2, it recalls n = 16 in three seeds of five
(0.993-1.000) and n = 32 partly (0.33-0.90), and at n = 64 it stays at 0.25 or below (seed 0
reaches 0.250 at 1e-2 and 0.234 at 3e-2, so "RNN recall < 0.2 at n = 64" holds only at 3e-3).
"""

from __future__ import annotations

import argparse
import sys

import torch

from seqlearn.long_range import LastStepReader, input_gradient_norms, recall_batch
from seqlearn.seeding import seed_all
from seqlearn.train import accuracy, fit

VOCAB, WIDTH, STEPS, BATCH, LR = 8, 32, 200, 64, 3e-3


def run(kind: str, T: int, seed: int, lr: float = LR) -> tuple[float, float]:
    """(recall after training, gradient ratio first / last position at initialisation)."""
    test_tokens, test_target = recall_batch(1000, T, VOCAB, torch.Generator().manual_seed(1000))
    seed_all(seed)
    model = LastStepReader(kind, VOCAB, WIDTH, T)
    grads = input_gradient_norms(model, test_tokens[:100], test_target[:100])
    data = torch.Generator().manual_seed(seed)
    fit(model, lambda step: recall_batch(BATCH, T, VOCAB, data), STEPS, lr=lr)
    return accuracy(model, test_tokens, test_target), float(grads[0] / grads[-1])


def rnn_grid(seeds: list[int], lengths: list[int], lrs: list[float]) -> int:
    """The RNN baseline on a learning-rate grid (the attention reader is at 1.000 at 3e-3)."""
    print("RNN recall; columns: seeds", seeds)
    for T in lengths:
        means = {}
        for lr in lrs:
            recalls = [run("rnn", T, seed, lr)[0] for seed in seeds]
            means[lr] = sum(recalls) / len(recalls)
            print(f"  n {T:3d}  lr {lr:<6g} " + " ".join(f"{r:.3f}" for r in recalls)
                  + f"  mean {means[lr]:.3f}", flush=True)
        print(f"  n {T:3d}  best lr {max(means, key=means.get):g}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--lengths", type=int, nargs="+", default=[8, 16, 32, 64])
    parser.add_argument("--rnn-lrs", type=float, nargs="+", default=None,
                        help="instead of the claims: the RNN's recall at each learning rate")
    args = parser.parse_args()
    if args.rnn_lrs:
        return rnn_grid(args.seeds, args.lengths, args.rnn_lrs)
    failed = []
    print("seed   n | RNN: recall  grad 1/n at init | attention: recall  grad 1/n at init")
    for seed in args.seeds:
        for T in args.lengths:
            (rnn_recall, rnn_ratio), (att_recall, att_ratio) = (
                run(kind, T, seed) for kind in ("rnn", "attention"))
            print(f"{seed:4d} {T:3d} | {rnn_recall:11.3f}  {rnn_ratio:16.1e} | "
                  f"{att_recall:17.3f}  {att_ratio:16.1e}")
            if att_recall < 0.99:
                failed.append((seed, T, "attention recall < 0.99"))
            if T == 64 and not (rnn_ratio < 1e-10 and rnn_recall < 0.2):
                failed.append((seed, T, "RNN claim"))
            if T == 64 and not att_ratio > 1e-2:
                failed.append((seed, T, "attention gradient ratio"))
    print(f"claims failed: {failed}" if failed else f"all claims held for seeds {args.seeds}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
