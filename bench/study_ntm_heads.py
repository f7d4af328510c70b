"""Head parameters of the NTM chapter's machine over seeds: what "Where the heads go" quotes.

    .venv/bin/python bench/study_ntm_heads.py            # seeds 0-9 (about 45 s of CPU each)
    make study-perturbed STUDY=bench/study_ntm_heads.py ARGS="0 1 2"
    make study-avx2 STUDY=bench/study_ntm_heads.py ARGS=0

Each seed trains the chapter's machine as the chapter does (feedforward controller of 32
units, 12 rows of 8, 600 steps of Adam at 3e-3, clipping at 10, copy lengths 1-5, vectors of
4 bits), then runs the machine one step at a time on the chapter's sequence of length 8
(``tests[8]``, sequence 0) and reads the parameters the controller emits. One line per seed:

- ``exact``: share of the 200 test sequences copied exactly at L = 1 2 3 4 5 8 10;
- ``loss<``: the first step at which the 20-step mean of the loss falls below 0.5, 0.1 and
  0.05 bits;
- ``dir``: the write head's offset, +1 or -1 (the larger shift weight summed over input
  steps 1..7);
- ``write s(d)``, ``gamma``: ranges over input steps 1..7 of the write head's weight on that
  offset and of its sharpening exponent;
- ``delim gate``, ``beta``: the write head's interpolation gate and key strength at the
  delimiter (step 8);
- ``read s(d)``: range and mean over output steps 9..16 of the read head's weight on the same
  offset; ``argmax==d``: whether it is the read head's most likely offset at every output
  step; ``gamma``: range of the read head's exponent over those steps.

Outputs under the native, perturbed and AVX2 numerics: bench/results/study_ntm.heads.txt.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from seqlearn.copy_task import copy_batch, copy_errors, copy_loss
from seqlearn.ntm import NTM
from seqlearn.seeding import seed_all
from seqlearn.train import fit

WIDTH, MAX_LEN, STEPS, BATCH, L = 4, 5, 600, 128, 8
TEST_LENGTHS = (1, 2, 3, 4, 5, 8, 10)


def train(seed: int, tests: dict) -> tuple[NTM, list[float], dict[int, float]]:
    """The chapter's training of its machine with ``seed``; returns model, losses, exact."""
    seed_all(seed)
    model = NTM(WIDTH + 1, WIDTH, 32, 12, 8, controller="feedforward")
    rng = np.random.default_rng(seed)

    def batches(step):
        return copy_batch(BATCH, int(rng.integers(1, MAX_LEN + 1)), WIDTH, rng)

    losses = fit(model, batches, STEPS, lr=3e-3, clip=10.0, loss=copy_loss)
    exact = {n: float((copy_errors(model, b) == 0).double().mean())
             for n, b in tests.items()}
    return model, losses, exact


@torch.no_grad()
def emitted(machine: NTM, x: torch.Tensor) -> list:
    """The head parameters the controller emits at each step of ``x[:1]``."""
    state, out = machine.cell.initial_state(1), []
    for t in range(x.shape[1]):
        inputs = torch.cat([x[:1, t], state.reads.flatten(1)], -1)
        hidden = torch.tanh(machine.cell.controller(inputs))
        out.append(machine.cell.head_parameters(hidden))
        _, state = machine.cell(x[:1, t], state)
    return out


def report(seed: int, tests: dict) -> str:
    start = time.process_time()
    model, losses, exact = train(seed, tests)
    bits = np.convolve(losses, np.ones(20) / 20, mode="valid") / np.log(2)
    below = [int(np.argmax(bits < level)) + 20 if (bits < level).any() else None
             for level in (0.5, 0.1, 0.05)]
    p = emitted(model, tests[L].x[:1])
    inputs, outputs = range(1, L), range(L + 1, 2 * L + 1)

    def shifts(head, steps):                                   # (T, 3)
        return np.stack([p[t].shifts[0, head].numpy() for t in steps])

    def gammas(head, steps):                                   # (T,)
        return np.array([float(p[t].gamma[0, head]) for t in steps])

    write, read = shifts(1, inputs), shifts(0, outputs)
    d = 2 if write[:, 2].sum() > write[:, 0].sum() else 0
    wg, rg = gammas(1, inputs), gammas(0, outputs)
    gate, beta = float(p[L].gate[0, 1]), float(p[L].beta[0, 1])
    rates = " ".join(f"{exact[n]:.3f}" for n in tests)
    return (f"seed {seed}: exact {rates} | loss<0.5,0.1,0.05 at {below} | "
            f"dir {'+1' if d == 2 else '-1'} | "
            f"write s(d) {write[:, d].min():.2f}-{write[:, d].max():.2f} "
            f"gamma {wg.min():.2f}-{wg.max():.2f} | delim gate {gate:.2f} beta {beta:.2f} | "
            f"read s(d) {read[:, d].min():.2f}-{read[:, d].max():.2f} "
            f"mean {read[:, d].mean():.2f} argmax==d {bool((read.argmax(1) == d).all())} "
            f"gamma {rg.min():.2f}-{rg.max():.2f} | cpu {time.process_time() - start:.0f} s")


def main() -> None:
    torch.set_num_threads(1)
    seeds = [int(s) for s in sys.argv[1:]] or list(range(10))
    tests = {n: copy_batch(200, n, WIDTH, np.random.default_rng(10_000 + n))
             for n in TEST_LENGTHS}
    for seed in seeds:
        print(report(seed, tests), flush=True)


if __name__ == "__main__":
    main()
