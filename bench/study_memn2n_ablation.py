"""Ablation of the end-to-end memory network: position encoding, temporal encoding and
random noise, each changed alone, over several seeds (chapter memory_networks).

    .venv/bin/python bench/study_memn2n_ablation.py                     # seeds 0-4, 4 min
    .venv/bin/python bench/study_memn2n_ablation.py --tasks 1 --hops 1  # 40 s

Everything is the setting of ``bench/study_memn2n.py`` (its ``run`` trains and tests each
model: the chapter's budget, 1000 training stories of 6-12 sentences, d 32, Adam with
learning rate 1e-2, clipping at 40, batches of 64, 400 steps of which the first 100 are
linear); only the model or its training changes, one switch at a time, as in the
ablation columns of Sukhbaatar et al. (2015, Table 1):

- ``full``: position encoding (PE), temporal encoding (TE), linear start (LS): the
  chapter's model;
- ``-PE``: sentences as bags of words (``MemN2N(..., position_encoding=False)``);
- ``-TE``: no temporal embeddings (``temporal_encoding=False``): the memory is a set;
- ``+RN``: random noise at the paper's rate, ``fit_memn2n(..., noise=0.1)``: every training
  batch reads its stories with empty memories inserted at random
  (``seqlearn.memory.random_noise_ages``; drawn from ``torch.Generator`` seeded
  ``20_000 + seed``). The ages of a 12-sentence story may then exceed the model's 12
  temporal rows; they are clipped to the last row, as the authors' released code does.

``seed_all(seed)`` before each model is built and the same batches for every variant
(``torch.Generator().manual_seed(seed)``), so the variants of one seed differ only by their
switch. Prints, per task, the accuracy of an order-blind reader (it knows every place the
person, or on task 2 the carrier, moved to and guesses one of them: the best a memory
without temporal encoding can be sure of) on each seed's test stories; then one line per
(task, hops, variant, seed), and per (task, hops) a table of test accuracy mean [min, max]
over seeds and, for each variant, in how many seeds it was below the full model.

What the runs show (the memory chapter's *Going further* quotes them): without temporal
encoding the networks fall to about 0.7 on both tasks (no seed above 0.725), close to the
order-blind reader (0.696 on task 1, 0.652 on task 2), below the full
model in every seed except task 1's 3-hop seed 2, where the full model is stuck too; without
position encoding task 1 is answered about as well as with it (1 hop: 0.972-0.990 against
0.976-0.991), but on task 2 the 3-hop network stays stuck in two seeds of five (0.33, 0.34)
and is slightly below the full model in the other three; random noise moves the mean
accuracy by less than 0.01 on every row, less than the spread between seeds.

Output of the default command (2 shared CPU cores, one thread; 4 minutes)::

    task 1: order-blind guess among the places moved to: 0.696 [0.688, 0.701]
    task 1 hops 3 full seed 0: acc 0.965  share on supporting facts per hop 0.77 0.90 0.89  (6.8 s)
    task 1 hops 3 full seed 1: acc 0.964  share on supporting facts per hop 0.75 0.87 0.87  (3.3 s)
    task 1 hops 3 full seed 2: acc 0.269  share on supporting facts per hop 0.01 0.05 0.22  (3.4 s)
    task 1 hops 3 full seed 3: acc 0.960  share on supporting facts per hop 0.73 0.89 0.89  (3.5 s)
    task 1 hops 3 full seed 4: acc 0.962  share on supporting facts per hop 0.84 0.74 0.83  (7.2 s)
    task 1 hops 3  -PE seed 0: acc 0.964  share on supporting facts per hop 0.72 0.87 0.92  (6.6 s)
    task 1 hops 3  -PE seed 1: acc 0.964  share on supporting facts per hop 0.65 0.84 0.88  (9.1 s)
    task 1 hops 3  -PE seed 2: acc 0.960  share on supporting facts per hop 0.75 0.88 0.90  (7.1 s)
    task 1 hops 3  -PE seed 3: acc 0.935  share on supporting facts per hop 0.80 0.88 0.84  (5.2 s)
    task 1 hops 3  -PE seed 4: acc 0.980  share on supporting facts per hop 0.69 0.86 0.92  (1.6 s)
    task 1 hops 3  -TE seed 0: acc 0.699  share on supporting facts per hop 0.58 0.60 0.55  (1.7 s)
    task 1 hops 3  -TE seed 1: acc 0.709  share on supporting facts per hop 0.60 0.59 0.58  (1.6 s)
    task 1 hops 3  -TE seed 2: acc 0.306  share on supporting facts per hop 0.01 0.01 0.24  (4.3 s)
    task 1 hops 3  -TE seed 3: acc 0.705  share on supporting facts per hop 0.65 0.65 0.60  (5.1 s)
    task 1 hops 3  -TE seed 4: acc 0.708  share on supporting facts per hop 0.60 0.64 0.57  (6.9 s)
    task 1 hops 3  +RN seed 0: acc 0.979  share on supporting facts per hop 0.75 0.91 0.92  (7.5 s)
    task 1 hops 3  +RN seed 1: acc 0.973  share on supporting facts per hop 0.75 0.90 0.89  (6.8 s)
    task 1 hops 3  +RN seed 2: acc 0.257  share on supporting facts per hop 0.01 0.01 0.25  (7.4 s)
    task 1 hops 3  +RN seed 3: acc 0.957  share on supporting facts per hop 0.75 0.89 0.89  (3.3 s)
    task 1 hops 3  +RN seed 4: acc 0.974  share on supporting facts per hop 0.84 0.84 0.89  (2.8 s)

    task 1, 3 hops: test accuracy, mean [min, max] over 5 seeds
      full  0.824 [0.269, 0.965]
       -PE  0.961 [0.935, 0.980]  below full in 2 of 5 seeds
       -TE  0.625 [0.306, 0.709]  below full in 4 of 5 seeds
       +RN  0.828 [0.257, 0.979]  below full in 2 of 5 seeds

    task 2: order-blind guess among the places moved to: 0.652 [0.643, 0.661]
    task 2 hops 3 full seed 0: acc 0.957  share on supporting facts per hop 0.89 0.82 0.89  (6.5 s)
    task 2 hops 3 full seed 1: acc 0.960  share on supporting facts per hop 0.92 0.75 0.91  (7.1 s)
    task 2 hops 3 full seed 2: acc 0.943  share on supporting facts per hop 0.91 0.81 0.89  (3.7 s)
    task 2 hops 3 full seed 3: acc 0.965  share on supporting facts per hop 0.90 0.83 0.86  (4.1 s)
    task 2 hops 3 full seed 4: acc 0.966  share on supporting facts per hop 0.92 0.81 0.91  (4.6 s)
    task 2 hops 3  -PE seed 0: acc 0.950  share on supporting facts per hop 0.87 0.72 0.89  (3.8 s)
    task 2 hops 3  -PE seed 1: acc 0.342  share on supporting facts per hop 0.22 0.19 0.24  (3.7 s)
    task 2 hops 3  -PE seed 2: acc 0.331  share on supporting facts per hop 0.19 0.20 0.25  (3.4 s)
    task 2 hops 3  -PE seed 3: acc 0.940  share on supporting facts per hop 0.90 0.82 0.86  (3.7 s)
    task 2 hops 3  -PE seed 4: acc 0.929  share on supporting facts per hop 0.88 0.80 0.87  (4.1 s)
    task 2 hops 3  -TE seed 0: acc 0.667  share on supporting facts per hop 0.85 0.60 0.56  (1.7 s)
    task 2 hops 3  -TE seed 1: acc 0.649  share on supporting facts per hop 0.84 0.58 0.58  (1.6 s)
    task 2 hops 3  -TE seed 2: acc 0.342  share on supporting facts per hop 0.26 0.28 0.23  (1.7 s)
    task 2 hops 3  -TE seed 3: acc 0.667  share on supporting facts per hop 0.83 0.59 0.55  (1.8 s)
    task 2 hops 3  -TE seed 4: acc 0.708  share on supporting facts per hop 0.85 0.60 0.59  (2.3 s)
    task 2 hops 3  +RN seed 0: acc 0.959  share on supporting facts per hop 0.92 0.83 0.91  (6.8 s)
    task 2 hops 3  +RN seed 1: acc 0.972  share on supporting facts per hop 0.93 0.79 0.93  (6.9 s)
    task 2 hops 3  +RN seed 2: acc 0.959  share on supporting facts per hop 0.93 0.83 0.90  (7.4 s)
    task 2 hops 3  +RN seed 3: acc 0.971  share on supporting facts per hop 0.92 0.85 0.89  (3.1 s)
    task 2 hops 3  +RN seed 4: acc 0.965  share on supporting facts per hop 0.93 0.83 0.93  (2.0 s)

    task 2, 3 hops: test accuracy, mean [min, max] over 5 seeds
      full  0.958 [0.943, 0.966]
       -PE  0.698 [0.331, 0.950]  below full in 5 of 5 seeds
       -TE  0.607 [0.342, 0.708]  below full in 5 of 5 seeds
       +RN  0.965 [0.959, 0.972]  below full in 1 of 5 seeds

    total 239 s

and of ``--tasks 1 --hops 1`` (task 1 with the one hop that answers it reliably; 40 s)::

    task 1: order-blind guess among the places moved to: 0.696 [0.688, 0.701]
    task 1 hops 1 full seed 0: acc 0.990  share on supporting facts per hop 0.93  (2.8 s)
    task 1 hops 1 full seed 1: acc 0.981  share on supporting facts per hop 0.91  (1.6 s)
    task 1 hops 1 full seed 2: acc 0.990  share on supporting facts per hop 0.93  (1.6 s)
    task 1 hops 1 full seed 3: acc 0.976  share on supporting facts per hop 0.92  (1.7 s)
    task 1 hops 1 full seed 4: acc 0.991  share on supporting facts per hop 0.94  (1.1 s)
    task 1 hops 1  -PE seed 0: acc 0.972  share on supporting facts per hop 0.94  (1.0 s)
    task 1 hops 1  -PE seed 1: acc 0.976  share on supporting facts per hop 0.94  (1.0 s)
    task 1 hops 1  -PE seed 2: acc 0.990  share on supporting facts per hop 0.94  (1.0 s)
    task 1 hops 1  -PE seed 3: acc 0.982  share on supporting facts per hop 0.94  (1.0 s)
    task 1 hops 1  -PE seed 4: acc 0.989  share on supporting facts per hop 0.96  (1.1 s)
    task 1 hops 1  -TE seed 0: acc 0.703  share on supporting facts per hop 0.67  (1.0 s)
    task 1 hops 1  -TE seed 1: acc 0.718  share on supporting facts per hop 0.68  (1.1 s)
    task 1 hops 1  -TE seed 2: acc 0.725  share on supporting facts per hop 0.68  (1.1 s)
    task 1 hops 1  -TE seed 3: acc 0.703  share on supporting facts per hop 0.68  (1.4 s)
    task 1 hops 1  -TE seed 4: acc 0.695  share on supporting facts per hop 0.68  (1.2 s)
    task 1 hops 1  +RN seed 0: acc 0.994  share on supporting facts per hop 0.94  (1.2 s)
    task 1 hops 1  +RN seed 1: acc 0.992  share on supporting facts per hop 0.92  (1.1 s)
    task 1 hops 1  +RN seed 2: acc 0.985  share on supporting facts per hop 0.92  (1.3 s)
    task 1 hops 1  +RN seed 3: acc 0.992  share on supporting facts per hop 0.92  (1.1 s)
    task 1 hops 1  +RN seed 4: acc 0.993  share on supporting facts per hop 0.94  (1.1 s)

    task 1, 1 hops: test accuracy, mean [min, max] over 5 seeds
      full  0.986 [0.976, 0.991]
       -PE  0.982 [0.972, 0.990]  below full in 3 of 5 seeds
       -TE  0.709 [0.695, 0.725]  below full in 5 of 5 seeds
       +RN  0.991 [0.985, 0.994]  below full in 1 of 5 seeds

    total 39 s
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study_memn2n import run  # noqa: E402 - the task, the model and the training

from seqlearn.data import stories  # noqa: E402

MOVE = re.compile(r"(\w+) (?:went|moved|journeyed|travelled) to the (\w+)")
TAKE = re.compile(r"(\w+) (?:picked up|got|grabbed) the (\w+)")

VARIANTS = {  # name: the switches of study_memn2n.run (position, temporal, noise)
    "full": dict(position=True, temporal=True, noise=0.0),
    "-PE": dict(position=False, temporal=True, noise=0.0),
    "-TE": dict(position=True, temporal=False, noise=0.0),
    "+RN": dict(position=True, temporal=True, noise=0.1),
}
SETTING = dict(steps=400, linear_steps=100, lr=1e-2, batch=64, d=32, train=1000,
               min_sentences=6, max_sentences=12)  # bench/study_memn2n.py's defaults


def order_blind(task: int, seed: int) -> float:
    """Expected accuracy, on seed ``seed``'s test stories, of a reader who knows every
    place the person (task 2: the carrier) moved to but not in which order, and guesses
    one of them uniformly: what a memory without temporal encoding can be sure of."""
    test = stories(1000, np.random.default_rng(10_000 + seed), task=task,
                   min_sentences=SETTING["min_sentences"],
                   max_sentences=SETTING["max_sentences"])
    hits = []
    for story in test:
        person = (story.question.split()[-2] if task == 1 else
                  TAKE.fullmatch(story.sentences[story.supporting[0]])[1])
        places = {m[2] for m in map(MOVE.fullmatch, story.sentences)
                  if m and m[1] == person}
        hits.append(1 / len(places) if story.answer in places else 0.0)
    return float(np.mean(hits))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--hops", type=int, nargs="+", default=[3])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS),
                        choices=list(VARIANTS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.perf_counter()
    for task in args.tasks:
        blind = np.array([order_blind(task, seed) for seed in range(args.seeds)])
        print(f"task {task}: order-blind guess among the places moved to: "
              f"{blind.mean():.3f} [{blind.min():.3f}, {blind.max():.3f}]", flush=True)
        for hops in args.hops:
            acc: dict[str, list[float]] = {}
            for name in args.variants:
                acc[name] = []
                for seed in range(args.seeds):
                    setting = argparse.Namespace(**SETTING, **VARIANTS[name])
                    r = run(task, hops, seed, setting)
                    acc[name].append(r["acc"])
                    share = " ".join(f"{float(s):.2f}" for s in r["all"])
                    print(f"task {task} hops {hops} {name:>4} seed {seed}: acc "
                          f"{r['acc']:.3f}  share on supporting facts per hop {share}  "
                          f"({r['seconds']:.1f} s)", flush=True)
            print(f"\ntask {task}, {hops} hops: test accuracy, mean [min, max] over "
                  f"{args.seeds} seeds")
            for name, values in acc.items():
                a = np.array(values)
                line = f"  {name:>4}  {a.mean():.3f} [{a.min():.3f}, {a.max():.3f}]"
                if name != "full" and "full" in acc:
                    below = int((a < np.array(acc["full"])).sum())
                    line += f"  below full in {below} of {len(a)} seeds"
                print(line)
            print(flush=True)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
