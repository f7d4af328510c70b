"""Causal softmax attention against the minGRU scan and linear attention as T grows, in one run.

    .venv/bin/python bench/bench_linear_attention.py          # d = H = 16, T = 256 ... 8192

For each length T (one sequence, float32, one thread) it times, alternately over 5 rounds and
keeping the fastest call of each:
  attention  causal softmax attention, seqlearn.attention.attention(q, k, v, causal=True);
  quadratic  masked linear attention (M ⊙ Q K^T) V with a decay (seqlearn.linear_attention);
  scan       the minGRU recurrence h_t = u_t h_{t-1} + b_t, linear_scan(method="parallel");
and the memory a generator keeps after T steps: the key/value cache (2 T d numbers) against
the fixed state (H numbers for a minGRU layer). It prints times, the ratio attention / scan
measured in this run, and the log-log slopes fitted for T >= 512. It exits with status 1 if the
attention slope is below 1.5 or the scan slope above 1.3 (the chapter's claim: O(T^2) time
against O(T)).

Output on the book's 2-core build machine (the numbers vary with load; slopes and ratios are
what matter):

    T         attention    quadratic         scan   attention/scan
    256        0.0007 s     0.0013 s     0.0007 s              1.0
    512        0.0021 s     0.0089 s     0.0005 s              4.6
    1024       0.0191 s     0.0317 s     0.0005 s             37.0
    2048       0.1060 s     0.1732 s     0.0008 s            133.7
    4096       0.5440 s     0.9014 s     0.0011 s            504.8
    8192       1.9334 s     3.6739 s     0.0023 s            856.3
    slopes (T >= 512): attention 2.45, quadratic 2.22, scan 0.57
    memory after T = 8192 steps: cache 262144 numbers, state 16 numbers

(The scan's slope stays below 1 at these lengths because fixed per-call costs dominate it.)
"""

from __future__ import annotations

import argparse
import sys

import torch

from seqlearn.attention import attention
from seqlearn.complexity import fastest_times, loglog_slope
from seqlearn.linear_attention import masked_linear_attention
from seqlearn.scan import linear_scan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=16)
    parser.add_argument("--max-log2", type=int, default=13)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    lengths = [2**k for k in range(8, args.max_log2 + 1)]
    g = torch.Generator().manual_seed(0)
    inputs = [(torch.randn(1, T, args.d, generator=g), torch.rand(1, T, args.d, generator=g),
               -torch.rand(1, T, generator=g)) for T in lengths]
    times = fastest_times({
        "attention": lambda z: attention(z[0], z[0], z[0], causal=True),
        "quadratic": lambda z: masked_linear_attention(z[0], z[0], z[0], z[2]),
        "scan": lambda z: linear_scan(z[1], z[0], method="parallel"),
    }, inputs, repeats=5)
    print(f"{'T':6s} {'attention':>12s} {'quadratic':>12s} {'scan':>12s}   attention/scan")
    for i, T in enumerate(lengths):
        row = [times[name, i] for name in ("attention", "quadratic", "scan")]
        print(f"{T:<6d} " + " ".join(f"{t:10.4f} s" for t in row)
              + f" {row[0] / row[2]:16.1f}")
    slopes = {name: loglog_slope(lengths[1:], [times[name, i] for i in range(1, len(lengths))])
              for name in ("attention", "quadratic", "scan")}
    print("slopes (T >= 512): " + ", ".join(f"{k} {v:.2f}" for k, v in slopes.items()))
    print(f"memory after T = {lengths[-1]} steps: cache {2 * lengths[-1] * args.d} numbers, "
          f"state {args.d} numbers")
    return 0 if slopes["attention"] >= 1.5 and slopes["scan"] <= 1.3 else 1


if __name__ == "__main__":
    sys.exit(main())
