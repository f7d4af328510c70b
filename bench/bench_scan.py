"""Speed of ``linear_scan(method="parallel")`` against the plain PyTorch loop, in one run.

    .venv/bin/python bench/bench_scan.py            # B=8, T=4096, H=64, float32

Times the two methods alternately over several repeats and prints the median of the per-pair
ratios loop / parallel (robust to load from other processes on a shared machine);
exits with status 1 when the ratio is below 3 (the speed-up the flagship chapter relies on)
or the results disagree.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from seqlearn.scan import linear_scan

TARGET = 3.0


def seconds(fn) -> float:
    """Wall-clock seconds of one call of ``fn()``."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def paired_times(slow, fast, repeats: int) -> tuple[list[float], list[float]]:
    """Times of ``slow`` and ``fast`` measured alternately (after one warm-up call each), so that
    load from other processes on a shared machine hits both alike."""
    slow(), fast()
    pairs = [(seconds(slow), seconds(fast)) for _ in range(repeats)]
    return [s for s, _ in pairs], [f for _, f in pairs]


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
    fast = linear_scan(a, b, h0, method="parallel")
    torch.testing.assert_close(fast, loop, rtol=1e-4, atol=1e-5)

    loop_times, fast_times = paired_times(lambda: linear_scan(a, b, h0, method="sequential"),
                                          lambda: linear_scan(a, b, h0, method="parallel"), args.repeats)
    ratio = statistics.median(s / f for s, f in zip(loop_times, fast_times))
    print(f"linear_scan B={args.batch} T={args.steps} H={args.hidden} float32, "
          f"{torch.get_num_threads()} threads, median of {args.repeats} alternating runs")
    print(f"  sequential loop : {statistics.median(loop_times) * 1e3:8.2f} ms")
    print(f"  parallel (scan) : {statistics.median(fast_times) * 1e3:8.2f} ms")
    print(f"  speed-up        : {ratio:8.2f}x  (median of the per-pair ratios; "
          f"target >= {TARGET:.0f}x: {'PASS' if ratio >= TARGET else 'FAIL'})")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
