"""Vaswani et al.'s Table 1 reproduced by measurement, beside the paper's entries.

    .venv/bin/python bench/study_table1.py            # about 15 s on one thread

For the five layer types of seqlearn.table1 (self-attention, a GRU, a causal convolution with
k = 3, the same with dilations 1, 3, 9, ..., restricted self-attention with r = 4), width d = 64,
one sequence, one thread:

- cost per layer: forward time for n = 256 ... 4096 (fastest of --repeats calls after a
  warm-up), its log-log slope for n >= 512; floating-point operations counted by PyTorch's
  FlopCounterMode, slopes in n (d = 32) and in d (n = 256); bytes saved for the backward pass,
  slope in n;
- sequential operations: the longest chain of operations that autograd records between the
  layer's input and its output (seqlearn.complexity.graph_depth, d = 8) for n = 16 ... 128.
  This counts PyTorch's kernels, not the layer's equations: torch.nn.LSTM, whose loop runs in
  one kernel, records a chain of 3 at every n. The self-attention chapter's Table 1 counts
  the chain of dependent steps of each layer's own equations instead (one step per matrix
  product, element-wise operation or row softmax: 5 for self-attention, 3 for a
  convolution, 9 n for the GRU); this column is kept as the kernels' view;
- maximum path length from the Jacobian patterns (seqlearn.complexity.max_path_length) for
  n = 16 ... 128, with its log-log slope in n;
- and the softmax alone over n x n scores (the Chinese Transformer notes give the softmax
  O(n), the cost of one query's row): its forward time for n = 256 ... 4096 with the log-log
  slope for n >= 512, and its share of attention's forward time at n = 2048.

Output on the book's 2-core build machine (shared with other jobs; time slopes vary by about
+-0.2 from run to run, the other columns are exact):

    d = 64, one thread; forward time in ms for n = [256, 512, 1024, 2048, 4096]
      self-attention                0.38     1.00     8.56    34.21   162.37
      recurrent                     6.15     6.17    12.17    24.82    50.15
      convolutional                 0.28     0.35     0.42     0.74     1.39
      dilated convolutional         0.15     0.24     0.40     0.76     1.33
      restricted self-attention     0.59     0.62     1.14     2.12     4.13

    layer type                 | slope of time  FLOPs in n  FLOPs in d  memory | sequential ops n = [16, 32, 64, 128] | max. path length n = [16, 32, 64, 128] (slope)
    self-attention             |          2.40        2.00        1.00    1.94 |               [11, 11, 11, 11] |               [1, 1, 1, 1] (0.00)
    recurrent                  |          1.01        1.00        2.00    0.95 |          [166, 326, 646, 1286] |          [16, 32, 64, 128] (1.00)
    convolutional              |          0.68        1.00        2.00    0.83 |                   [4, 4, 4, 4] |            [8, 16, 32, 64] (1.00)
    dilated convolutional      |          0.83        1.00        2.00    0.83 |                   [4, 4, 4, 4] |               [3, 4, 4, 5] (0.22)
    restricted self-attention  |          0.91        1.00        1.00    0.99 |               [16, 16, 16, 16] |             [4, 8, 16, 32] (1.00)

    Vaswani et al. (2017), Table 1: complexity per layer, sequential operations, maximum path length
      Self-Attention               O(n^2 d), O(1), O(1)           (measured: self-attention)
      Recurrent                    O(n d^2), O(n), O(n)           (measured: recurrent)
      Convolutional                O(k n d^2), O(1), O(log_k(n))  (measured: convolutional and dilated convolutional)
      Self-Attention (restricted)  O(r n d), O(1), O(n/r)         (measured: restricted self-attention)

    softmax over n x n scores, forward time in ms for n = [256, 512, 1024, 2048, 4096]:
          0.10     0.16     0.63     2.70    42.63   log-log slope for n >= 512: 2.62
    softmax share of self-attention's forward time at n = 2048: 0.15

Two more runs gave time slopes of 2.57-2.77 for self-attention, 1.00-1.16 for the GRU, and
softmax slopes of 2.58 and 2.84: the softmax's time grows at least like n^2 (faster at
n = 4096, where the 64 MiB of scores no longer fit in the cache). The sequential operations
are the recorded chain of autograd operations: 11 for self-attention, 4 for a convolution, 16
for restricted attention at every n, 10 n + 6 for the GRU (PyTorch runs it step by step).
"""

from __future__ import annotations

import argparse
import math
import sys

import torch
from torch.utils.flop_counter import FlopCounterMode

from seqlearn.attention import attention
from seqlearn.complexity import (fastest_times, graph_depth, loglog_slope, max_path_length,
                                 saved_tensor_bytes)
from seqlearn.table1 import KINDS, PAPER, PAPER_ROW, dependency_patterns, layer


def flops(fn, x) -> int:
    with FlopCounterMode(display=False) as counter:
        fn(x)
    return counter.get_total_flops()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--d", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    ns, path_ns = [256, 512, 1024, 2048, 4096], [16, 32, 64, 128]
    fns = {kind: layer(kind, args.d) for kind in KINDS}
    with torch.no_grad():
        best = fastest_times(fns, [torch.randn(1, n, args.d) for n in ns], args.repeats)
    rows = {}
    for kind, fn in fns.items():
        times = [best[kind, i] for i in range(len(ns))]
        memory = [saved_tensor_bytes(fn, torch.randn(1, n, args.d, requires_grad=True))
                  for n in ns[:4]]
        small = layer(kind, 32)
        flop_n = [flops(small, torch.randn(1, n, 32)) for n in (64, 128, 256)]
        flop_d = [flops(layer(kind, d), torch.randn(1, 256, d)) for d in (16, 32, 64)]
        paths, steps = [], []
        for T in path_ns:
            layers, within, causal = dependency_patterns(kind, T)
            paths.append(max_path_length(layers, within=within, causal=causal)[1])
            steps.append(graph_depth(layer(kind, 8), torch.randn(1, T, 8)))
        rows[kind] = dict(
            time=times, time_slope=loglog_slope(ns[1:], times[1:]),
            flop_n=loglog_slope((64, 128, 256), flop_n),
            flop_d=loglog_slope((16, 32, 64), flop_d),
            memory_slope=loglog_slope(ns[1:4], memory[1:]),
            paths=paths, path_slope=loglog_slope(path_ns, paths), steps=steps)
        print(f"measured {kind}", file=sys.stderr)

    print(f"d = {args.d}, one thread; forward time in ms for n = {ns}")
    for kind in KINDS:
        print(f"  {kind:26s}" + " ".join(f"{t * 1e3:8.2f}" for t in rows[kind]["time"]))
    print(f"\n{'layer type':26s} | slope of time  FLOPs in n  FLOPs in d  memory | "
          f"sequential ops n = {path_ns} | max. path length n = {path_ns} (slope)")
    for kind in KINDS:
        r = rows[kind]
        print(f"{kind:26s} | {r['time_slope']:13.2f} {r['flop_n']:11.2f} {r['flop_d']:11.2f} "
              f"{r['memory_slope']:7.2f} | {str(r['steps']):>30s} | "
              f"{str(r['paths']):>26s} ({r['path_slope']:.2f})")
    print("\nVaswani et al. (2017), Table 1: complexity per layer, sequential operations, "
          "maximum path length")
    for row, entries in PAPER.items():
        kinds = " and ".join(k for k in KINDS if PAPER_ROW[k] == row)
        print(f"  {row:28s} {', '.join(entries):30s} (measured: {kinds})")

    scores = [torch.randn(n, n) for n in ns]
    best = fastest_times({"softmax": lambda s: torch.softmax(s, -1)}, scores, args.repeats)
    times = [best["softmax", i] for i in range(len(ns))]
    print(f"\nsoftmax over n x n scores, forward time in ms for n = {ns}:\n  "
          + " ".join(f"{t * 1e3:8.2f}" for t in times)
          + f"   log-log slope for n >= 512: {loglog_slope(ns[1:], times[1:]):.2f}")
    n = 2048
    x = torch.randn(1, n, args.d)
    with torch.no_grad():
        scores = x @ x.transpose(-2, -1) / math.sqrt(args.d)
        best = fastest_times({"attention": lambda _: attention(x, x, x),
                              "softmax": lambda _: torch.softmax(scores, -1)}, [None],
                             args.repeats)
    share = best["softmax", 0] / best["attention", 0]
    print(f"softmax share of self-attention's forward time at n = {n}: {share:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
