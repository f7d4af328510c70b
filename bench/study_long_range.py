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
"""

from __future__ import annotations

import argparse
import sys

import torch

from seqlearn.long_range import LastStepReader, input_gradient_norms, recall_batch
from seqlearn.seeding import seed_all
from seqlearn.train import accuracy, fit

VOCAB, WIDTH, STEPS, BATCH, LR = 8, 32, 200, 64, 3e-3


def run(kind: str, T: int, seed: int) -> tuple[float, float]:
    """(recall after training, gradient ratio first / last position at initialisation)."""
    test_tokens, test_target = recall_batch(1000, T, VOCAB, torch.Generator().manual_seed(1000))
    seed_all(seed)
    model = LastStepReader(kind, VOCAB, WIDTH, T)
    grads = input_gradient_norms(model, test_tokens[:100], test_target[:100])
    data = torch.Generator().manual_seed(seed)
    fit(model, lambda step: recall_batch(BATCH, T, VOCAB, data), STEPS, lr=LR)
    return accuracy(model, test_tokens, test_target), float(grads[0] / grads[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--lengths", type=int, nargs="+", default=[8, 16, 32, 64])
    args = parser.parse_args()
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
