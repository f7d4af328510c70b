"""The model comparison of the chapter "From GRU to causal attention", repeated over seeds.

    .venv/bin/python bench/study_flagship_models.py            # seeds 0-9

Part 1, latch task (seqlearn.data.sample_and_hold, batches of 32 sequences of 20 steps, write
probability 0.2, 300 Adam steps at learning rate 0.02): a GRU (H = 4), a minGRU (H = 4,
log-space scan), and one causal attention head (embedding of width 8, seqlearn.causal.
KeyValueAttention) without and with sinusoidal positions. Test MSE on 512 fresh sequences.

Part 2, delayed latch (the value one step AFTER the latest flag): one minGRU layer (H = 8)
against two stacked layers (the second reads [x_t; h1_t]), 400 steps.

Output (test MSE per seed; always predicting 0 costs 0.265 on the test set, about 0.27 in
expectation, since targets are 0 before the first write; for the GRU also the loss of its last
training batch and the largest drop of a unit's mean keep gate at flags 3, 7 and 11
of a 14-step test sequence below its mean at the other steps):

    seed 0  GRU 0.0030  GRU training loss 0.0026  GRU flag gap 0.6416  minGRU 0.0047  attention 0.1416  attention+PE 0.0409  1 minGRU layer 0.1428  2 minGRU layers 0.0210
    seed 1  GRU 0.0016  GRU training loss 0.0008  GRU flag gap 0.6660  minGRU 0.0221  attention 0.1396  attention+PE 0.0414  1 minGRU layer 0.1352  2 minGRU layers 0.0223
    seed 2  GRU 0.0029  GRU training loss 0.0034  GRU flag gap 0.4090  minGRU 0.0047  attention 0.1383  attention+PE 0.0369  1 minGRU layer 0.1450  2 minGRU layers 0.0250
    seed 3  GRU 0.0027  GRU training loss 0.0031  GRU flag gap 0.3664  minGRU 0.0052  attention 0.1467  attention+PE 0.0412  1 minGRU layer 0.1362  2 minGRU layers 0.0134
    seed 4  GRU 0.0031  GRU training loss 0.0055  GRU flag gap 0.3900  minGRU 0.0086  attention 0.1384  attention+PE 0.0515  1 minGRU layer 0.1372  2 minGRU layers 0.0344
    seed 5  GRU 0.0022  GRU training loss 0.0014  GRU flag gap 0.5182  minGRU 0.0089  attention 0.1391  attention+PE 0.0454  1 minGRU layer 0.1499  2 minGRU layers 0.0230
    seed 6  GRU 0.0007  GRU training loss 0.0009  GRU flag gap 0.4698  minGRU 0.0047  attention 0.1404  attention+PE 0.0471  1 minGRU layer 0.1426  2 minGRU layers 0.0200
    seed 7  GRU 0.0025  GRU training loss 0.0024  GRU flag gap 0.7048  minGRU 0.0155  attention 0.1446  attention+PE 0.0417  1 minGRU layer 0.1420  2 minGRU layers 0.0333
    seed 8  GRU 0.0010  GRU training loss 0.0009  GRU flag gap 0.6079  minGRU 0.0058  attention 0.1376  attention+PE 0.0373  1 minGRU layer 0.1333  2 minGRU layers 0.0388
    seed 9  GRU 0.0014  GRU training loss 0.0015  GRU flag gap 0.4672  minGRU 0.0120  attention 0.1395  attention+PE 0.0412  1 minGRU layer 0.1378  2 minGRU layers 0.0206
    all claims held for seeds [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]

(about 7 s per seed on one thread.)

Conclusion (the claims checked below and asserted by the chapter for its own run): the GRU
(< 0.01, last training batch < 0.02, a unit whose keep gate drops by at least 0.25 at the flags)
and the minGRU (< 0.05) solve the latch; attention without positions does not (> 0.1: it cannot
tell the latest flag from older ones); with positions one head gets below 0.08 (at most 0.052),
still behind the GRU. One minGRU layer fails the delayed latch (> 0.1), two stacked layers solve
it (< 0.06; at most 0.039).

Under the perturbed numerics (`make study-perturbed STUDY=bench/study_flagship_models.py`;
output in bench/results/study_flagship_models.perturbed.txt; all ten seeds, about 90 s of CPU)
all claims held for every seed again. Only the stacked minGRU figures of the delayed latch
moved, in the fourth decimal (two layers, seed 7: 0.0334 natively, 0.0333 perturbed; seed 9:
0.0203, 0.0204); every other figure came out as in a native re-run on the same machine
(bench/results/study_flagship_models.native.txt). That native re-run itself differs from the
table above in the delayed-latch columns only (two layers, seed 5: 0.0241 instead of 0.0230;
seed 3: 0.0135; seed 7: 0.0334; seed 9: 0.0203; one layer, seed 9: 0.1379). Over the three runs
the extremes are unchanged: GRU at most 0.0031 (last training batch at most 0.0055, flag gap at
least 0.366), minGRU at most 0.0221, attention without positions at least 0.1376, with positions
at most 0.0515, one minGRU layer on the delayed latch at least 0.1333, two layers 0.0134-0.0388.
"""

from __future__ import annotations

import copy
import sys

import torch
from torch import nn

from seqlearn import causal
from seqlearn.data import sample_and_hold
from seqlearn.mingru import MinGRU
from seqlearn.unroll import gru_gates

torch.set_num_threads(1)


class Attention(nn.Module):
    """Embedding, optional sinusoidal positions, one causal key/value head, linear readout."""

    def __init__(self, positions: bool, d: int = 8) -> None:
        super().__init__()
        self.embed, self.positions = nn.Linear(2, d), positions
        self.head, self.readout = causal.KeyValueAttention(d, d, d), nn.Linear(d, 1)

    def forward(self, x):
        fx = self.embed(x)
        fx = causal.add_positions(fx) if self.positions else fx
        h, weights = self.head(fx)
        return self.readout(h)[..., 0], weights


class Recurrent(nn.Module):
    def __init__(self, kind: str, H: int = 4) -> None:
        super().__init__()
        self.kind = kind
        self.net = nn.GRU(2, H, batch_first=True) if kind == "GRU" else MinGRU(2, H)
        self.readout = nn.Linear(H, 1)

    def forward(self, x):
        h = self.net(x)[0] if self.kind == "GRU" else self.net(x)
        return self.readout(h)[..., 0], None


class Stack(nn.Module):
    def __init__(self, layers: int, H: int = 8) -> None:
        super().__init__()
        self.first = MinGRU(2, H)
        self.second = MinGRU(2 + H, H) if layers == 2 else None
        self.readout = nn.Linear(H, 1)

    def forward(self, x):
        h = self.first(x)
        if self.second is not None:
            h = self.second(torch.cat([x, h], dim=-1))
        return self.readout(h)[..., 0], None


def delayed(x: torch.Tensor) -> torch.Tensor:
    """Target: the value one step after the latest flag (0 before there is one)."""
    flag = torch.cat([torch.zeros_like(x[:, :1, 1]), x[:, :-1, 1]], dim=1) > 0  # flag at t-1
    T = x.shape[1]
    latest = torch.where(flag, torch.arange(T), -1).cummax(dim=1).values
    return torch.where(latest >= 0, x[..., 0].gather(1, latest.clamp(min=0)), 0.0)


def flag_gap(gru: nn.GRU, gen: torch.Generator) -> float:
    """The chapter's reset check: flags at steps 3, 7 and 11 of a 14-step sequence; the largest
    drop, over the units, of the mean keep gate at the flags below its mean elsewhere."""
    x, _ = sample_and_hold(1, 14, 0.2, gen)
    x[0, :, 1] = 0.0
    x[0, [2, 6, 10], 1] = 1.0
    with torch.no_grad():
        u = gru_gates(copy.deepcopy(gru).double(), x.double())[0][0]      # (14, H)
    flags = [2, 6, 10]
    others = [t for t in range(14) if t not in flags]
    return float((u[others].mean(0) - u[flags].mean(0)).max())


def train(model, steps, gen, target=None, last_loss=None):
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    for _ in range(steps):
        x, y = sample_and_hold(32, 20, 0.2, gen)
        y = y if target is None else target(x)
        loss = nn.functional.mse_loss(model(x)[0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if last_loss is not None:
        last_loss.append(loss.item())
    x, y = sample_and_hold(512, 20, 0.2, torch.Generator().manual_seed(10_000))
    y = y if target is None else target(x)
    with torch.no_grad():
        return nn.functional.mse_loss(model(x)[0], y).item()


def main(seeds=range(10)) -> int:
    rows = {}
    for seed in seeds:
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        gru, last = Recurrent("GRU"), []
        rows[seed] = {
            "GRU": train(gru, 300, gen, last_loss=last),
            "GRU training loss": last[0],
            "GRU flag gap": flag_gap(gru.net, torch.Generator().manual_seed(seed + 100)),
            "minGRU": train(Recurrent("minGRU"), 300, gen),
            "attention": train(Attention(False), 300, gen),
            "attention+PE": train(Attention(True), 300, gen),
            "1 minGRU layer": train(Stack(1), 400, gen, delayed),
            "2 minGRU layers": train(Stack(2), 400, gen, delayed),
        }
        print(f"seed {seed}  " + "  ".join(f"{k} {v:.4f}" for k, v in rows[seed].items()),
              flush=True)
    ok = all(r["GRU"] < 0.01 and r["minGRU"] < 0.05 and r["attention"] > 0.1
             and r["GRU training loss"] < 0.02 and r["GRU flag gap"] >= 0.25
             and r["attention+PE"] < 0.08 and r["1 minGRU layer"] > 0.1
             and r["2 minGRU layers"] < 0.06 for r in rows.values())
    print("all claims held" if ok else "a claim FAILED", "for seeds", list(rows))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
