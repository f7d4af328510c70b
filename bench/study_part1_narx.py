"""Multi-seed study of the NARX system-identification experiment (Recurrent networks chapter).

Command::

    .venv/bin/python bench/study_part1_narx.py

The chapter trains ``NARX(1, 16, 1, input_window=2, output_window=2)`` in open loop (true past
outputs fed back, 600 Adam steps, lr 1e-2) on the plant of Narendra and Parthasarathy
(eq-rnn-plant) driven by uniform inputs in [-2, 2] (16 sequences of 200 steps), then measures the
RMS error on the unseen input u_t = sin(2 pi t / 25) (100 steps) in open loop (one-step
predictions) and in closed loop (simulation from the input alone), relative to the standard
deviation of the test output. The seed sets the weights' initialisation and the training inputs.

Results as first stored (seeds 0-9, CPU, float64), RMS error / signal std:

    seed  open loop  closed loop
       0      0.065        0.166
       1      0.035        0.103
       2      0.045        0.130
       3      0.029        0.075
       4      0.027        0.040
       5      0.032        0.054
       6      0.031        0.055
       7      0.031        0.056
       8      0.084        0.185
       9      0.031        0.076
    worst     0.084        0.185

Re-run natively on 2026-11-29 on the machine that stores the chapter's outputs now
(output in bench/results/study_part1_narx.native.txt; 21 s of CPU): the same table, digit
for digit.

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_part1_narx.py`;
output in bench/results/study_part1_narx.perturbed.txt; 38 s of CPU): the same table
again (open loop 0.027 to 0.084, closed loop 0.040 to 0.185); in float64 the rounding
differences stay below the three printed digits.

Conclusion (all three runs): in every seed the closed-loop simulation stays below 0.19
and the one-step predictions below 0.09 of the signal's standard deviation; the chapter (one
seed) asserts the looser bounds 0.35 and 0.20, which held for every seed. The closed-loop
error is always larger than the open-loop one (errors feed back), by a factor 1.5 to 3.
"""

from __future__ import annotations

import math

import torch

from seqlearn.recurrent import NARX

F64 = torch.float64


def plant(u: torch.Tensor) -> torch.Tensor:
    """eq-rnn-plant for a batch of input sequences u (B, T); y_0 = y_1 = 0."""
    y = torch.zeros_like(u)
    for t in range(2, u.shape[1]):
        y1, y2 = y[:, t - 1], y[:, t - 2]
        y[:, t] = y1 * y2 * (y1 + 2.5) / (1 + y1 ** 2 + y2 ** 2) + u[:, t - 1]
    return y


def run(seed: int) -> tuple[float, float]:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    u_train = 4 * torch.rand(16, 200, generator=gen, dtype=F64) - 2
    y_train = plant(u_train)
    u_test = torch.sin(2 * math.pi * torch.arange(100, dtype=F64) / 25).view(1, -1)
    y_test = plant(u_test)
    narx = NARX(1, 16, 1, input_window=2, output_window=2).double()
    optimizer = torch.optim.Adam(narx.parameters(), lr=1e-2)
    u_in, y_in = u_train[..., None], y_train[..., None]
    for _ in range(600):
        loss = ((narx(u_in, y_in) - y_in) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        one_step = narx(u_test[..., None], y_test[..., None])[0, :, 0]
        simulated = narx(u_test[..., None])[0, :, 0]
    spread = float(y_test.std())
    rms = [float(((pred - y_test[0]) ** 2).mean().sqrt()) / spread
           for pred in (one_step, simulated)]
    return rms[0], rms[1]


if __name__ == "__main__":
    torch.set_num_threads(1)
    print("seed  open loop  closed loop")
    worst = [0.0, 0.0]
    for seed in range(10):
        open_loop, closed_loop = run(seed)
        worst = [max(worst[0], open_loop), max(worst[1], closed_loop)]
        print(f"{seed:4d}  {open_loop:9.3f}  {closed_loop:11.3f}")
    print(f"worst {worst[0]:9.3f}  {worst[1]:11.3f}")
