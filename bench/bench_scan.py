"""Speed of the four methods of ``linear_scan`` in one run: the blocked scan against the loop
and against the two tree scans.

    .venv/bin/python bench/bench_scan.py            # B=8, T=4096, H=64, float32

Times the methods in turn (round robin, after one warm-up call each) over several repeats and
prints each method's median time and the median of the per-round ratios method / parallel
(robust to load from other processes on a shared machine). Exits with status 1 when the
results disagree, when the loop is less than 3 times slower than ``method="parallel"`` (the
speed-up the flagship chapter relies on), or when a tree scan (Hillis-Steele, Blelloch) is
faster than ``method="parallel"`` (the chapter ``gru_to_attention`` calls the blocked scan the
fastest of the three on a CPU). The rounds each method executes are counted by the chapter
and by ``tests/package/test_scan.py``, so a ``"parallel"`` that silently ran the loop would
fail there, not only here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from seqlearn.scan import METHODS, linear_scan

TARGET = 3.0


def seconds(fn) -> float:
    """Wall-clock seconds of one call of ``fn()``."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def round_robin(calls: dict, repeats: int) -> dict[str, list[float]]:
    """Times of every call of ``calls`` measured in turn, ``repeats`` rounds (after one
    warm-up call each), so that load from other processes hits all of them alike."""
    for fn in calls.values():
        fn()
    times = {name: [] for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            times[name].append(seconds(fn))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()

    gen = torch.Generator().manual_seed(0)
    shape = (args.batch, args.steps, args.hidden)
    a = torch.rand(shape, generator=gen) * 2 - 1  # any real coefficients, here in (-1, 1)
    b = torch.randn(shape, generator=gen)
    h0 = torch.randn(shape[0], shape[2], generator=gen)

    loop = linear_scan(a, b, h0, method="sequential")
    for method in METHODS:
        torch.testing.assert_close(linear_scan(a, b, h0, method=method), loop,
                                   rtol=1e-4, atol=1e-5)

    times = round_robin({m: (lambda m=m: linear_scan(a, b, h0, method=m)) for m in METHODS},
                        args.repeats)
    ratio = {m: statistics.median(t / f for t, f in zip(times[m], times["parallel"]))
             for m in METHODS}
    print(f"linear_scan B={args.batch} T={args.steps} H={args.hidden} float32, "
          f"{torch.get_num_threads()} threads, median of {args.repeats} rounds")
    for m in METHODS:
        print(f"  {m:14s}: {statistics.median(times[m]) * 1e3:8.2f} ms   "
              f"{ratio[m]:6.2f} x the time of parallel")
    fastest = all(ratio[m] > 1 for m in ("hillis-steele", "blelloch"))
    speed_up = ratio["sequential"] >= TARGET
    print(f"  loop / parallel >= {TARGET:.0f}: {'PASS' if speed_up else 'FAIL'}; "
          f"parallel the fastest of the three scans: {'PASS' if fastest else 'FAIL'}")
    return 0 if speed_up and fastest else 1


if __name__ == "__main__":
    sys.exit(main())
