"""Weight sharing across positions (Sequences and convolution chapter), over seeds.

Command::

    .venv/bin/python bench/study_conv_motif.py

The chapter's experiment: decide whether a noisy sequence of length 32 holds a motif of
five samples (label 1) or a decoy with the same values in another order (label 0); in
training the pattern starts in the first 12 positions, the test places it at positions
16 to 27. A convolutional detector (4 kernels of size 5, padding 4, ReLU, global max
pooling, linear read-out; 34 parameters) and a dense network (32 -> 16 -> 2; 562
parameters) are trained with ``seqlearn.train.fit`` (Adam, full batch of 256, 300 steps)
at each learning rate of the same grid, 3e-3, 1e-2 (the chapter's) and 3e-2.
``seed_all(seed)`` sets the data, the kernels and torch's global generator (the dense
layers); seed 0 is the chapter's recipe (under the same numerics the chapter prints seed 0's
figures at lr 1e-2). About 2 s per seed and rate.

Results as first stored (torch 2.13 CPU, one thread; lr 1e-2), test accuracy at the trained /
the new positions::

    seed  conv seen  conv new  dense seen  dense new  conv new - dense new
       0       1.00      1.00        0.82       0.53                  0.46
       1       0.99      0.99        0.84       0.51                  0.48
       2       1.00      1.00        0.85       0.48                  0.52
       3       0.99      0.99        0.82       0.48                  0.51
       4       1.00      0.99        0.86       0.52                  0.48
       5       0.99      0.99        0.85       0.47                  0.52
       6       1.00      1.00        0.84       0.50                  0.49
       7       1.00      1.00        0.86       0.55                  0.45
       8       1.00      1.00        0.81       0.53                  0.46
       9       0.99      0.99        0.84       0.49                  0.50

Re-run natively on 2026-11-29 on the machine that stores the chapter's outputs now
(output in bench/results/study_conv_motif.native.txt; 19 s of CPU): the same table.

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_conv_motif.py`;
output in bench/results/study_conv_motif.perturbed.txt; 25 s of CPU): the same table again
(to the two printed digits): conv new 0.99 to 1.00, dense new 0.47 to 0.55, gap 0.45 to
0.52.

Conclusion (all three runs): in every seed the detector scores at least 0.99 at the new
positions and the dense network at most 0.55 (0.81 to 0.86 at the trained ones), a gap of
at least 0.45.
The chapter (seed 0) asserts at least 0.9 for the detector and a gap of at least 0.25.

A fair baseline (added 2026-11-29; output in the same two files, native and perturbed
numerics identical to the two printed digits; 60 and 64 s of CPU for the grid). Each model
runs at every learning rate of the grid, and each model's rate is then chosen per seed by
its accuracy at the trained positions (ties to the smaller rate). Tuned, the detector scores
0.98 to 1.00 at the new positions and the dense network 0.48 to 0.56; at no rate of the grid
does the dense network exceed 0.56 there, nor the detector fall below 0.98. The gap is at
least 0.43 at every rate and seed, so the comparison does not rest on the learning rate.
"""

from __future__ import annotations

import sys

import torch
from torch import nn

from seqlearn import conv
from seqlearn.seeding import seed_all
from seqlearn.train import accuracy, fit

F64 = torch.float64
K, T_SEQ = 5, 32
MOTIF = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0], dtype=F64)
DECOY = torch.tensor([1.0, 1.0, -1.0, -1.0, 1.0], dtype=F64)


def motif_data(n, starts, gen):
    """n noisy sequences (n, 1, T); label 1: the motif starts at a position drawn from
    ``starts``, label 0: the decoy does."""
    x = 0.5 * torch.randn(n, 1, T_SEQ, generator=gen, dtype=F64)
    labels = torch.randint(0, 2, (n,), generator=gen)
    pick = torch.randint(0, len(starts), (n,), generator=gen)
    where = torch.tensor(list(starts))[pick]
    for i in range(n):
        x[i, 0, where[i]:where[i] + K] += 1.5 * (MOTIF if labels[i] else DECOY)
    return x, labels


class ConvDetector(nn.Module):
    """conv1d (shared kernels) -> ReLU -> max over time -> linear read-out."""

    def __init__(self, gen, channels=4):
        super().__init__()
        kernels = 0.3 * torch.randn(channels, 1, K, generator=gen, dtype=F64)
        self.weight = nn.Parameter(kernels)
        self.bias = nn.Parameter(torch.zeros(channels, dtype=F64))
        self.head = nn.Linear(channels, 2, dtype=F64)

    def forward(self, x):                                          # (B, 1, T) -> (B, 2)
        features = torch.relu(conv.conv1d(x, self.weight, self.bias, padding=K - 1))
        return self.head(features.amax(dim=-1))


def run(seed, lr=1e-2):
    """Accuracies {model: (trained positions, new positions)} for one seed and learning rate."""
    gen = seed_all(seed)
    x_train, y_train = motif_data(256, range(0, 12), gen)
    x_seen, y_seen = motif_data(512, range(0, 12), gen)
    x_new, y_new = motif_data(512, range(16, T_SEQ - K + 1), gen)
    models = {"convolution": ConvDetector(gen),
              "dense": nn.Sequential(nn.Flatten(), nn.Linear(T_SEQ, 16, dtype=F64),
                                     nn.ReLU(), nn.Linear(16, 2, dtype=F64))}
    results = {}
    for name, model in models.items():
        fit(model, lambda step: (x_train, y_train), 300, lr=lr)
        results[name] = (accuracy(model, x_seen, y_seen), accuracy(model, x_new, y_new))
    return results


LRS = (3e-3, 1e-2, 3e-2)      # the same grid for both models; 1e-2 is the chapter's


if __name__ == "__main__":
    seeds = [int(s) for s in sys.argv[1:]] or list(range(10))
    print("seed  lr      conv seen  conv new  dense seen  dense new  conv new - dense new")
    chosen = []
    dense_new_max = 0.0
    for seed in seeds:
        rows = {lr: run(seed, lr) for lr in LRS}
        for lr, r in rows.items():
            (cs, cn), (ds, dn) = r["convolution"], r["dense"]
            dense_new_max = max(dense_new_max, dn)
            print(f"{seed:4d}  {lr:<6g}  {cs:9.2f}  {cn:8.2f}  {ds:10.2f}  {dn:9.2f}  "
                  f"{cn - dn:20.2f}")
        # each model's learning rate chosen by accuracy at the trained positions
        best = {m: max(LRS, key=lambda lr: rows[lr][m][0]) for m in ("convolution", "dense")}
        chosen.append((seed, best, rows[best["convolution"]]["convolution"][1],
                       rows[best["dense"]]["dense"][1]))
    print("tuned (lr with the best accuracy at the trained positions, per model and seed):")
    print("seed  conv lr  conv new  dense lr  dense new")
    for seed, best, cn, dn in chosen:
        print(f"{seed:4d}  {best['convolution']:<7g}  {cn:8.2f}  {best['dense']:<8g}  {dn:9.2f}")
    print(f"tuned: conv new >= {min(c[2] for c in chosen):.2f}, dense new <= "
          f"{max(c[3] for c in chosen):.2f}; dense new at any lr of the grid <= "
          f"{dense_new_max:.2f}")
