"""Sample-and-hold with a two-unit GRU over many seeds: the study behind chapters/gru.ipynb.

Command (from the repository root; about 3 minutes on one CPU core)::

    .venv/bin/python bench/study_gru_hold.py               # seeds 0-49
    .venv/bin/python bench/study_gru_hold.py --seeds 0 1 2

The chapter's setup: ``seqlearn.gated.GRU(2, 2)`` and a linear read-out, Adam (lr 0.03), 300
updates on batches of 32 sequences of 30 steps (writes at t = 0 and with probability 0.1), then
256 test sequences of 150 steps with writes of probability 0.05. Seed ``s`` draws the data with
``torch.Generator().manual_seed(s)``, the GRU with ``manual_seed(s + 1000)`` and the read-out
after ``torch.manual_seed(s)``; seed 0 is the run stored with the chapter. Per seed the
script prints the test MSE over the target variance, the memory unit's mean update gate at
writes and between writes, the squared error (over the target variance) for gaps <= 30 and
31-59 steps, and the direct-path retention after 30 steps; then, claim by claim, the seeds in
which a check of the chapter would fail.

Results (seeds 0-49; the columns: test MSE / target variance, mean update gate of the memory
unit at writes and between writes, squared error / variance for gaps <= 30 and 31-59, mean
direct-path retention after 30 steps)::

    seed   0 mse/var 0.051 u_write 0.171 u_quiet 0.989 err<=30 0.021 err31-59 0.169 kept@30 0.722
    seed   1 mse/var 0.051 u_write 0.318 u_quiet 0.958 err<=30 0.016 err31-59 0.174 kept@30 0.302
    seed   2 mse/var 0.018 u_write 0.144 u_quiet 0.916 err<=30 0.011 err31-59 0.042 kept@30 0.088
    seed   3 mse/var 0.018 u_write 0.077 u_quiet 0.838 err<=30 0.012 err31-59 0.041 kept@30 0.005
    seed   4 mse/var 0.036 u_write 0.168 u_quiet 0.990 err<=30 0.015 err31-59 0.105 kept@30 0.745
    seed   5 mse/var 0.022 u_write 0.311 u_quiet 0.977 err<=30 0.008 err31-59 0.079 kept@30 0.524
    seed   6 mse/var 0.054 u_write 0.149 u_quiet 0.980 err<=30 0.015 err31-59 0.206 kept@30 0.549
    seed   7 mse/var 0.083 u_write 0.141 u_quiet 0.942 err<=30 0.026 err31-59 0.282 kept@30 0.188
    seed   8 mse/var 0.033 u_write 0.072 u_quiet 0.964 err<=30 0.019 err31-59 0.088 kept@30 0.337
    seed   9 mse/var 0.038 u_write 0.321 u_quiet 0.971 err<=30 0.010 err31-59 0.130 kept@30 0.446
    seed  10 mse/var 0.039 u_write 0.153 u_quiet 0.980 err<=30 0.009 err31-59 0.131 kept@30 0.564
    seed  11 mse/var 0.091 u_write 0.212 u_quiet 0.946 err<=30 0.031 err31-59 0.299 kept@30 0.270
    seed  12 mse/var 0.109 u_write 0.243 u_quiet 0.982 err<=30 0.036 err31-59 0.338 kept@30 0.599
    seed  13 mse/var 0.032 u_write 0.293 u_quiet 0.985 err<=30 0.012 err31-59 0.105 kept@30 0.637
    seed  14 mse/var 0.058 u_write 0.491 u_quiet 0.937 err<=30 0.022 err31-59 0.193 kept@30 0.201
    seed  15 mse/var 0.064 u_write 0.162 u_quiet 0.982 err<=30 0.015 err31-59 0.197 kept@30 0.594
    seed  16 mse/var 0.056 u_write 0.177 u_quiet 0.989 err<=30 0.024 err31-59 0.177 kept@30 0.716
    seed  17 mse/var 0.028 u_write 0.211 u_quiet 0.964 err<=30 0.010 err31-59 0.102 kept@30 0.403
    seed  18 mse/var 0.049 u_write 0.324 u_quiet 0.981 err<=30 0.010 err31-59 0.176 kept@30 0.576
    seed  19 mse/var 0.041 u_write 0.231 u_quiet 0.964 err<=30 0.012 err31-59 0.117 kept@30 0.370
    seed  20 mse/var 0.044 u_write 0.118 u_quiet 0.940 err<=30 0.019 err31-59 0.144 kept@30 0.180
    seed  21 mse/var 0.038 u_write 0.075 u_quiet 0.958 err<=30 0.023 err31-59 0.099 kept@30 0.270
    seed  22 mse/var 0.084 u_write 0.362 u_quiet 0.964 err<=30 0.021 err31-59 0.302 kept@30 0.371
    seed  23 mse/var 0.020 u_write 0.082 u_quiet 0.962 err<=30 0.012 err31-59 0.046 kept@30 0.318
    seed  24 mse/var 0.046 u_write 0.170 u_quiet 0.989 err<=30 0.020 err31-59 0.146 kept@30 0.723
    seed  25 mse/var 0.016 u_write 0.069 u_quiet 0.887 err<=30 0.010 err31-59 0.040 kept@30 0.026
    seed  26 mse/var 0.057 u_write 0.224 u_quiet 0.985 err<=30 0.015 err31-59 0.195 kept@30 0.638
    seed  27 mse/var 0.050 u_write 0.284 u_quiet 0.986 err<=30 0.011 err31-59 0.144 kept@30 0.651
    seed  28 mse/var 0.029 u_write 0.213 u_quiet 0.986 err<=30 0.012 err31-59 0.097 kept@30 0.664
    seed  29 mse/var 0.051 u_write 0.086 u_quiet 0.976 err<=30 0.020 err31-59 0.157 kept@30 0.484
    seed  30 mse/var 0.095 u_write 0.415 u_quiet 0.971 err<=30 0.026 err31-59 0.329 kept@30 0.436
    seed  31 mse/var 0.088 u_write 0.387 u_quiet 0.966 err<=30 0.040 err31-59 0.262 kept@30 0.382
    seed  32 mse/var 0.045 u_write 0.071 u_quiet 0.980 err<=30 0.024 err31-59 0.127 kept@30 0.550
    seed  33 mse/var 0.033 u_write 0.079 u_quiet 0.962 err<=30 0.026 err31-59 0.058 kept@30 0.314
    seed  34 mse/var 0.047 u_write 0.103 u_quiet 0.963 err<=30 0.023 err31-59 0.144 kept@30 0.328
    seed  35 mse/var 0.038 u_write 0.080 u_quiet 0.971 err<=30 0.019 err31-59 0.115 kept@30 0.421
    seed  36 mse/var 0.035 u_write 0.159 u_quiet 0.986 err<=30 0.014 err31-59 0.136 kept@30 0.647
    seed  37 mse/var 0.037 u_write 0.277 u_quiet 0.989 err<=30 0.010 err31-59 0.121 kept@30 0.729
    seed  38 mse/var 0.049 u_write 0.111 u_quiet 0.989 err<=30 0.019 err31-59 0.161 kept@30 0.709
    seed  39 mse/var 0.062 u_write 0.217 u_quiet 0.986 err<=30 0.022 err31-59 0.198 kept@30 0.660
    seed  40 mse/var 0.061 u_write 0.334 u_quiet 0.943 err<=30 0.029 err31-59 0.188 kept@30 0.244
    seed  41 mse/var 0.039 u_write 0.103 u_quiet 0.948 err<=30 0.014 err31-59 0.140 kept@30 0.227
    seed  42 mse/var 0.115 u_write 0.674 u_quiet 0.938 err<=30 0.061 err31-59 0.333 kept@30 0.209
    seed  43 mse/var 0.058 u_write 0.129 u_quiet 0.987 err<=30 0.025 err31-59 0.183 kept@30 0.668
    seed  44 mse/var 0.049 u_write 0.238 u_quiet 0.990 err<=30 0.024 err31-59 0.152 kept@30 0.744
    seed  45 mse/var 0.027 u_write 0.303 u_quiet 0.971 err<=30 0.007 err31-59 0.088 kept@30 0.416
    seed  46 mse/var 0.067 u_write 0.317 u_quiet 0.969 err<=30 0.015 err31-59 0.200 kept@30 0.426
    seed  47 mse/var 0.079 u_write 0.228 u_quiet 0.968 err<=30 0.018 err31-59 0.190 kept@30 0.421
    seed  48 mse/var 0.061 u_write 0.174 u_quiet 0.984 err<=30 0.021 err31-59 0.179 kept@30 0.610
    seed  49 mse/var 0.052 u_write 0.131 u_quiet 0.980 err<=30 0.022 err31-59 0.160 kept@30 0.566
    mse/var   min 0.016 median 0.049 max 0.115
    u_write   min 0.069 median 0.175 max 0.674
    u_quiet   min 0.838 median 0.971 max 0.990
    err<=30   min 0.007 median 0.019 max 0.061
    err31-59  min 0.040 median 0.149 max 0.338
    kept@30   min 0.005 median 0.441 max 0.745
    err31-59 / err<=30 min 2.24 median 8.67
    u_quiet - u_write  min 0.264 median 0.773

Claims of the chapter, seed by seed::

    test MSE < 0.25 var (asserted)               every seed
    u at writes < 0.5                            fails in seeds [42]
    u between writes > 0.9                       fails in seeds [3, 25]
    u between writes > 0.75 (asserted)           every seed
    u between - u at writes > 0.15 (asserted)    every seed
    error <= 30 steps < 0.1 var (asserted)       every seed
    error 31-59 > 1.5 x error <= 30 (asserted)   every seed
    direct path keeps < 0.9 after 30 (asserted)  every seed

Conclusion: every run learns the task (test MSE at most 0.12 of the variance) and shows the
error shape the chapter asserts (small up to the training length, at least 2.2 times as large
beyond), and the direct path always leaks (retention after 30 steps below 0.75). 47 of 50 runs
close the memory unit's gate below 0.5 at writes and keep it above 0.9 between writes; seeds
3 and 25 hold through the candidate's recurrent matrix with a leakier gate (0.84, 0.89) and
seed 42 closes the gate only to 0.67. The chapter asserts, with room to spare, a gap of more
than 0.15 (smallest 0.26), u > 0.75 between writes (lowest 0.84) and an error beyond the
training length more than 1.5 times the error within it (smallest ratio 2.2).

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_gru_hold.py`; output in
bench/results/study_gru_hold.perturbed.txt; all 50 seeds, about 3.5 minutes of CPU) every line
of the table, the summary and the claims came out identical, to the printed three decimals, to
the table above, and so did a native re-run on the same machine
(bench/results/study_gru_hold.native.txt). Over both numerics: test MSE 0.016-0.115 of the
variance, gate at writes 0.069-0.674, between writes 0.838-0.990, gap between the two at least
0.264, error ratio at least 2.24, retention after 30 steps 0.005-0.745; the same 47 of 50 runs
close the gate below 0.5 and keep it above 0.9, and every asserted claim held in every seed.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from torch import nn

from seqlearn.data import sample_and_hold
from seqlearn.gated import GRU


def run(seed: int) -> dict[str, float]:
    data_gen = torch.Generator().manual_seed(seed)
    gru = GRU(2, 2, generator=torch.Generator().manual_seed(seed + 1000))
    torch.manual_seed(seed)
    readout = nn.Linear(2, 1)
    optimiser = torch.optim.Adam(list(gru.parameters()) + list(readout.parameters()), lr=0.03)
    for _ in range(300):
        x, y = sample_and_hold(32, 30, 0.1, data_gen, write_at_start=True)
        loss = nn.functional.mse_loss(readout(gru(x)[0])[..., 0], y)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    x, y = sample_and_hold(256, 150, 0.05, data_gen, write_at_start=True)
    with torch.no_grad():
        cell = gru.cells[0]
        gx, h, trace = cell.project_input(x), torch.zeros(256, 2), []
        for t in range(150):
            trace.append(cell.gates(gx[:, t], h))
            h = trace[-1].h
        u = torch.stack([s.u for s in trace], 1)                        # (B, T, H)
        prediction = readout(torch.stack([s.h for s in trace], 1))[..., 0]
    writes = x[..., 1] > 0
    unit = int(torch.argmax(u[~writes].mean(0) - u[writes].mean(0)))
    latest = torch.where(writes, torch.arange(150), 0).cummax(dim=1).values
    gaps = torch.arange(150) - latest
    log_keep = torch.log(u[..., unit]).cumsum(dim=1)
    retained = torch.exp(log_keep - log_keep.gather(1, latest))
    var = y.var().item()
    sq = (prediction - y) ** 2
    return {"mse/var": sq.mean().item() / var,
            "u_write": u[writes][:, unit].mean().item(),
            "u_quiet": u[~writes][:, unit].mean().item(),
            "err<=30": sq[gaps <= 30].mean().item() / var,
            "err31-59": sq[(gaps > 30) & (gaps < 60)].mean().item() / var,
            "kept@30": retained[gaps == 30].mean().item()}


CLAIMS = {  # the chapter asserts the claims marked "(asserted)"; the others describe the runs
    "test MSE < 0.25 var (asserted)": lambda r: r["mse/var"] < 0.25,
    "u at writes < 0.5": lambda r: r["u_write"] < 0.5,
    "u between writes > 0.9": lambda r: r["u_quiet"] > 0.9,
    "u between writes > 0.75 (asserted)": lambda r: r["u_quiet"] > 0.75,
    "u between - u at writes > 0.15 (asserted)": lambda r: r["u_quiet"] - r["u_write"] > 0.15,
    "error <= 30 steps < 0.1 var (asserted)": lambda r: r["err<=30"] < 0.1,
    "error 31-59 > 1.5 x error <= 30 (asserted)": lambda r: r["err31-59"] > 1.5 * r["err<=30"],
    "direct path keeps < 0.9 after 30 (asserted)": lambda r: r["kept@30"] < 0.9,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(50)))
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = {}
    for seed in args.seeds:
        results[seed] = r = run(seed)
        print(f"seed {seed:3d} " + " ".join(f"{k} {v:.3f}" for k, v in r.items()), flush=True)
    for key in next(iter(results.values())):
        values = np.array([r[key] for r in results.values()])
        print(f"{key:9s} min {values.min():.3f} median {np.median(values):.3f} "
              f"max {values.max():.3f}")
    ratio = np.array([r["err31-59"] / r["err<=30"] for r in results.values()])
    gap = np.array([r["u_quiet"] - r["u_write"] for r in results.values()])
    print(f"err31-59 / err<=30 min {ratio.min():.2f} median {np.median(ratio):.2f}")
    print(f"u_quiet - u_write  min {gap.min():.3f} median {np.median(gap):.3f}")
    for claim, holds in CLAIMS.items():
        failing = [s for s, r in results.items() if not holds(r)]
        print(f"{claim:44s} {'every seed' if not failing else f'fails in seeds {failing}'}")


if __name__ == "__main__":
    main()
