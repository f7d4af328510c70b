"""Multi-seed study of the end-to-end memory network (chapter memory_networks).

Accuracy of 1, 2 and 3 hops on the one-supporting-fact task ("where is mary?") and the
two-supporting-fact task ("where is the apple?", answered through the person who carries
it), and the share of each hop's attention that lands on each supporting fact.

Setting (the chapter's reduced budget): ``seqlearn.data.stories`` with 4 people, 6 places,
3 objects and 6-12 sentences; 1000 training stories (as many questions as bAbI 1k has per
task) drawn once from ``numpy.random.default_rng(seed)``, batches of 64 drawn from them with
``torch.Generator().manual_seed(seed)``; 1000 test stories from ``default_rng(10_000 +
seed)``; ``seqlearn.memory.MemN2N`` with d 32, position and temporal encoding and adjacent
tying; Adam with learning rate 1e-2, gradient-norm clipping at 40, 400 steps of which the
first 100 are linear (no softmax in the memory: linear start). ``seed_all(seed)`` before the
model is built, so seed 0 is exactly what the chapter trains.

    .venv/bin/python bench/study_memn2n.py                     # 5 seeds, ~2 min on 2 cores
    .venv/bin/python bench/study_memn2n.py --linear-steps 0    # without linear start
    .venv/bin/python bench/study_memn2n.py --max-sentences 20 --steps 4000 --lr 5e-3 \\
        --batch 32 --linear-steps 1000 --hops 1 3 --tasks 2   # the MEASURED.md setting

Prints one line per (task, hops, seed): test accuracy, then for every hop the mean attention
mass on each supporting fact (``f1`` the carrier's pick-up and ``f2`` the carrier's last
move on task 2; ``f1`` the person's last move on task 1) and on both (``all``); then the
mean [min, max] over seeds. Output of the first command (2 shared CPU cores, one thread)::

    task 1 hops 1 seed 0 acc 0.990  hop 1: f1 0.93 all 0.93  (4.9 s)
    task 1 hops 1 seed 1 acc 0.981  hop 1: f1 0.91 all 0.91  (1.5 s)
    task 1 hops 1 seed 2 acc 0.990  hop 1: f1 0.93 all 0.93  (2.2 s)
    task 1 hops 1 seed 3 acc 0.976  hop 1: f1 0.92 all 0.92  (2.4 s)
    task 1 hops 1 seed 4 acc 0.991  hop 1: f1 0.94 all 0.94  (2.0 s)
    task 1 hops 1 mean acc 0.986 [0.976, 0.991]  share on a supporting fact per hop: 0.93 [0.91, 0.94]
    task 1 hops 2 seed 0 acc 0.973  hop 1: f1 0.87 all 0.87  hop 2: f1 0.85 all 0.85  (2.2 s)
    task 1 hops 2 seed 1 acc 0.400  hop 1: f1 0.20 all 0.20  hop 2: f1 0.32 all 0.32  (1.5 s)
    task 1 hops 2 seed 2 acc 0.389  hop 1: f1 0.24 all 0.24  hop 2: f1 0.36 all 0.36  (2.7 s)
    task 1 hops 2 seed 3 acc 0.966  hop 1: f1 0.84 all 0.84  hop 2: f1 0.92 all 0.92  (3.0 s)
    task 1 hops 2 seed 4 acc 0.987  hop 1: f1 0.85 all 0.85  hop 2: f1 0.94 all 0.94  (3.2 s)
    task 1 hops 2 mean acc 0.743 [0.389, 0.987]  share on a supporting fact per hop: 0.60 [0.20, 0.87]  0.68 [0.32, 0.94]
    task 1 hops 3 seed 0 acc 0.965  hop 1: f1 0.77 all 0.77  hop 2: f1 0.90 all 0.90  hop 3: f1 0.89 all 0.89  (4.9 s)
    task 1 hops 3 seed 1 acc 0.964  hop 1: f1 0.75 all 0.75  hop 2: f1 0.87 all 0.87  hop 3: f1 0.87 all 0.87  (4.8 s)
    task 1 hops 3 seed 2 acc 0.269  hop 1: f1 0.01 all 0.01  hop 2: f1 0.05 all 0.05  hop 3: f1 0.22 all 0.22  (2.7 s)
    task 1 hops 3 seed 3 acc 0.960  hop 1: f1 0.73 all 0.73  hop 2: f1 0.89 all 0.89  hop 3: f1 0.89 all 0.89  (2.2 s)
    task 1 hops 3 seed 4 acc 0.962  hop 1: f1 0.84 all 0.84  hop 2: f1 0.74 all 0.74  hop 3: f1 0.83 all 0.83  (1.5 s)
    task 1 hops 3 mean acc 0.824 [0.269, 0.965]  share on a supporting fact per hop: 0.62 [0.01, 0.84]  0.69 [0.05, 0.90]  0.74 [0.22, 0.89]
    task 2 hops 1 seed 0 acc 0.406  hop 1: f1 0.00 f2 0.29 all 0.29  (0.8 s)
    task 2 hops 1 seed 1 acc 0.376  hop 1: f1 0.00 f2 0.25 all 0.25  (0.8 s)
    task 2 hops 1 seed 2 acc 0.383  hop 1: f1 0.00 f2 0.24 all 0.24  (1.6 s)
    task 2 hops 1 seed 3 acc 0.356  hop 1: f1 0.00 f2 0.25 all 0.25  (1.5 s)
    task 2 hops 1 seed 4 acc 0.344  hop 1: f1 0.00 f2 0.23 all 0.23  (1.5 s)
    task 2 hops 1 mean acc 0.373 [0.344, 0.406]  share on a supporting fact per hop: 0.25 [0.23, 0.29]
    task 2 hops 2 seed 0 acc 0.967  hop 1: f1 0.93 f2 0.00 all 0.93  hop 2: f1 0.00 f2 0.86 all 0.87  (1.8 s)
    task 2 hops 2 seed 1 acc 0.969  hop 1: f1 0.92 f2 0.00 all 0.92  hop 2: f1 0.00 f2 0.87 all 0.88  (1.8 s)
    task 2 hops 2 seed 2 acc 0.386  hop 1: f1 0.01 f2 0.20 all 0.21  hop 2: f1 0.00 f2 0.24 all 0.24  (1.3 s)
    task 2 hops 2 seed 3 acc 0.971  hop 1: f1 0.92 f2 0.00 all 0.92  hop 2: f1 0.00 f2 0.88 all 0.89  (1.2 s)
    task 2 hops 2 seed 4 acc 0.982  hop 1: f1 0.96 f2 0.00 all 0.96  hop 2: f1 0.00 f2 0.90 all 0.91  (1.2 s)
    task 2 hops 2 mean acc 0.855 [0.386, 0.982]  share on a supporting fact per hop: 0.79 [0.21, 0.96]  0.76 [0.24, 0.91]
    task 2 hops 3 seed 0 acc 0.957  hop 1: f1 0.89 f2 0.00 all 0.89  hop 2: f1 0.01 f2 0.81 all 0.82  hop 3: f1 0.00 f2 0.89 all 0.89  (1.5 s)
    task 2 hops 3 seed 1 acc 0.960  hop 1: f1 0.91 f2 0.00 all 0.92  hop 2: f1 0.07 f2 0.68 all 0.75  hop 3: f1 0.00 f2 0.91 all 0.91  (1.6 s)
    task 2 hops 3 seed 2 acc 0.943  hop 1: f1 0.91 f2 0.00 all 0.91  hop 2: f1 0.01 f2 0.80 all 0.81  hop 3: f1 0.00 f2 0.88 all 0.89  (1.6 s)
    task 2 hops 3 seed 3 acc 0.965  hop 1: f1 0.90 f2 0.00 all 0.90  hop 2: f1 0.01 f2 0.82 all 0.83  hop 3: f1 0.00 f2 0.86 all 0.86  (1.5 s)
    task 2 hops 3 seed 4 acc 0.966  hop 1: f1 0.92 f2 0.00 all 0.92  hop 2: f1 0.02 f2 0.79 all 0.81  hop 3: f1 0.00 f2 0.91 all 0.91  (1.6 s)
    task 2 hops 3 mean acc 0.958 [0.943, 0.966]  share on a supporting fact per hop: 0.91 [0.89, 0.92]  0.80 [0.75, 0.83]  0.89 [0.86, 0.91]

and of the second command (``--linear-steps 0 --tasks 2``)::

    task 2 hops 1 seed 0 acc 0.405  hop 1: f1 0.00 f2 0.21 all 0.21  (2.3 s)
    task 2 hops 1 seed 1 acc 0.373  hop 1: f1 0.01 f2 0.20 all 0.21  (0.9 s)
    task 2 hops 1 seed 2 acc 0.404  hop 1: f1 0.00 f2 0.22 all 0.22  (0.8 s)
    task 2 hops 1 seed 3 acc 0.415  hop 1: f1 0.00 f2 0.21 all 0.21  (0.8 s)
    task 2 hops 1 seed 4 acc 0.354  hop 1: f1 0.01 f2 0.21 all 0.21  (0.8 s)
    task 2 hops 1 mean acc 0.390 [0.354, 0.415]  share on a supporting fact per hop: 0.21 [0.21, 0.22]
    task 2 hops 2 seed 0 acc 0.405  hop 1: f1 0.01 f2 0.20 all 0.21  hop 2: f1 0.02 f2 0.21 all 0.24  (1.2 s)
    task 2 hops 2 seed 1 acc 0.401  hop 1: f1 0.00 f2 0.20 all 0.21  hop 2: f1 0.00 f2 0.25 all 0.25  (1.2 s)
    task 2 hops 2 seed 2 acc 0.387  hop 1: f1 0.01 f2 0.20 all 0.21  hop 2: f1 0.01 f2 0.25 all 0.25  (1.2 s)
    task 2 hops 2 seed 3 acc 0.395  hop 1: f1 0.01 f2 0.20 all 0.21  hop 2: f1 0.00 f2 0.23 all 0.23  (1.3 s)
    task 2 hops 2 seed 4 acc 0.354  hop 1: f1 0.01 f2 0.20 all 0.21  hop 2: f1 0.00 f2 0.22 all 0.22  (2.0 s)
    task 2 hops 2 mean acc 0.388 [0.354, 0.405]  share on a supporting fact per hop: 0.21 [0.21, 0.21]  0.24 [0.22, 0.25]
    task 2 hops 3 seed 0 acc 0.406  hop 1: f1 0.16 f2 0.13 all 0.29  hop 2: f1 0.01 f2 0.26 all 0.27  hop 3: f1 0.01 f2 0.26 all 0.26  (3.5 s)
    task 2 hops 3 seed 1 acc 0.391  hop 1: f1 0.15 f2 0.13 all 0.28  hop 2: f1 0.01 f2 0.24 all 0.25  hop 3: f1 0.02 f2 0.23 all 0.25  (3.3 s)
    task 2 hops 3 seed 2 acc 0.807  hop 1: f1 0.68 f2 0.02 all 0.70  hop 2: f1 0.01 f2 0.66 all 0.67  hop 3: f1 0.01 f2 0.58 all 0.59  (2.3 s)
    task 2 hops 3 seed 3 acc 0.432  hop 1: f1 0.09 f2 0.14 all 0.23  hop 2: f1 0.01 f2 0.27 all 0.27  hop 3: f1 0.01 f2 0.25 all 0.26  (2.4 s)
    task 2 hops 3 seed 4 acc 0.356  hop 1: f1 0.03 f2 0.19 all 0.21  hop 2: f1 0.00 f2 0.24 all 0.24  hop 3: f1 0.01 f2 0.23 all 0.24  (1.8 s)
    task 2 hops 3 mean acc 0.478 [0.356, 0.807]  share on a supporting fact per hop: 0.34 [0.21, 0.70]  0.34 [0.24, 0.67]  0.32 [0.24, 0.59]

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_memn2n.py`; output in
bench/results/study_memn2n.perturbed.txt, 4 min 20 s of CPU time; and with
ARGS="--linear-steps 0 --tasks 2", bench/results/study_memn2n.no_linear_start.perturbed.txt,
2 min of CPU time): every accuracy and every attention share of both commands is the same as
above, digit for digit (only the timings differ), so the chapter's ranges hold under both
numerics.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from seqlearn.data import StoryBatch, encode_stories, stories, story_vocab
from seqlearn.memory import MemN2N, answer_accuracy, supporting_share
from seqlearn.seeding import seed_all
from seqlearn.train import fit_memn2n


def fact_masks(batch: list, S: int) -> list[torch.Tensor]:
    """One (N, S) mask per supporting fact: True at that fact's sentence."""
    masks = []
    for j in range(len(batch[0].supporting)):
        mask = torch.zeros(len(batch), S, dtype=torch.bool)
        for b, story in enumerate(batch):
            mask[b, story.supporting[j]] = True
        masks.append(mask)
    return masks


def run(task: int, hops: int, seed: int, args: argparse.Namespace) -> dict:
    vocab = story_vocab()
    world = dict(task=task, min_sentences=args.min_sentences, max_sentences=args.max_sentences)
    train = encode_stories(stories(args.train, np.random.default_rng(seed), **world), vocab)
    test_stories = stories(1000, np.random.default_rng(10_000 + seed), **world)
    test = encode_stories(test_stories, vocab)
    seed_all(seed)
    model = MemN2N(len(vocab), args.d, hops, max_sentences=args.max_sentences,
                   # the switches of bench/study_memn2n_ablation.py (default: on)
                   position_encoding=getattr(args, "position", True),
                   temporal_encoding=getattr(args, "temporal", True))
    g = torch.Generator().manual_seed(seed)

    def batches(step: int) -> StoryBatch:
        index = torch.randint(len(train.answer), (args.batch,), generator=g)
        return StoryBatch(*(t[index] for t in train))

    start = time.perf_counter()
    fit_memn2n(model, batches, args.steps, lr=args.lr, linear_steps=args.linear_steps,
               noise=getattr(args, "noise", 0.0),  # random noise: the ablation's RN
               generator=torch.Generator().manual_seed(20_000 + seed))
    seconds = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        _, attention = model(test.story, test.query)  # (N, hops, S)
    shares = [supporting_share(attention, m) for m in fact_masks(test_stories, test.story.shape[1])]
    return {"acc": answer_accuracy(model, test), "facts": torch.stack(shares, 1),  # (hops, F)
            "all": supporting_share(attention, test.supporting), "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--hops", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--linear-steps", type=int, default=100)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--train", type=int, default=1000)
    parser.add_argument("--min-sentences", type=int, default=6)
    parser.add_argument("--max-sentences", type=int, default=12)
    args = parser.parse_args()
    for task in args.tasks:
        for hops in args.hops:
            runs = []
            for seed in range(args.seeds):
                r = run(task, hops, seed, args)
                runs.append(r)
                per_hop = "  ".join(
                    f"hop {k + 1}: " + " ".join(f"f{j + 1} {v:.2f}" for j, v in
                                               enumerate(r["facts"][k].tolist()))
                    + f" all {float(r['all'][k]):.2f}" for k in range(hops))
                print(f"task {task} hops {hops} seed {seed} acc {r['acc']:.3f}  {per_hop}"
                      f"  ({r['seconds']:.1f} s)", flush=True)
            acc = np.array([r["acc"] for r in runs])
            share = np.stack([r["all"].numpy() for r in runs])  # (seeds, hops)
            print(f"task {task} hops {hops} mean acc {acc.mean():.3f} [{acc.min():.3f}, "
                  f"{acc.max():.3f}]  share on a supporting fact per hop: "
                  + "  ".join(f"{share[:, k].mean():.2f} [{share[:, k].min():.2f}, "
                              f"{share[:, k].max():.2f}]" for k in range(hops)), flush=True)


if __name__ == "__main__":
    main()
