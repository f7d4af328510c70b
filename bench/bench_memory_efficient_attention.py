"""Peak memory and time of ``memory_efficient_attention`` against plain ``attention``, one run.

    .venv/bin/python bench/bench_memory_efficient_attention.py      # n = 8192, d = 64, float32

Self-attention of one sequence (B = 1, one head) with q, k, v of shape (1, n, d), float32, one
thread. Targets (the self-attention chapter's): the blocked version's peak memory is at most
10 % of the plain version's, and its time at most 2x, for the forward pass and for
forward + backward.

*Memory* is the rise of the resident set's high-water mark (``VmHWM`` in
``/proc/self/status``) during one call, each measured in a fresh subprocess: the child builds
its inputs, runs the call once at a small n (so that one-off set-up is not counted), resets
the high-water mark to the current resident size by writing ``5`` to ``/proc/self/clear_refs``,
runs the call at full n and reports ``VmHWM`` minus the resident size at the reset.
(``ru_maxrss`` would not do: a child inherits its parent's peak.) The inputs and the output
are allocated before the reset (the output of the forward call is preallocated by neither:
both versions allocate an (n, d) output, 2 MiB, which is counted for both).

*Time* is measured in one further subprocess that calls the two versions alternately
(``--repeats`` pairs after a warm-up) and reports the median of the per-pair ratios, so that
load from other processes on a shared machine hits both alike.

Prints the peak of each of the four calls, the two memory ratios and the two time ratios,
and exits with status 1 when a target is missed or the outputs differ by more than 1e-5.

Output on the book's 2-core build machine (an earlier run under heavier load from other jobs
gave the same ratios within 0.01: 0.020 and 0.031 for memory, 0.46 and 0.61 for time):

    n = 8192, d = 64, float32, one thread, block_size = 128
      peak memory rise, plain   forward         :   515.7 MiB
      peak memory rise, blocked forward         :    10.2 MiB
      peak memory rise, plain   forward+backward:   775.6 MiB
      peak memory rise, blocked forward+backward:    24.2 MiB
      largest |plain - blocked| of the outputs: 6.7e-08
    forward         : memory ratio blocked/plain 0.020 (target <= 0.1), time ratio 0.46 (target <= 2.0; medians 0.29 s / 0.64 s)
    forward+backward: memory ratio blocked/plain 0.031 (target <= 0.1), time ratio 0.60 (target <= 2.0; medians 0.94 s / 1.52 s)
    all targets met
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from seqlearn.attention import attention, memory_efficient_attention

MEMORY_TARGET = 0.10
TIME_TARGET = 2.0
VERSIONS = ("plain", "blocked")
PASSES = ("forward", "forward+backward")


def call(version: str, passes: str, q, k, v, block_size: int) -> None:
    """One call of a version: forward only (no autograd graph) or forward and backward."""
    def run():
        if version == "plain":
            return attention(q, k, v)[0]
        return memory_efficient_attention(q, k, v, block_size=block_size)

    if passes == "forward":
        with torch.no_grad():
            run()
    else:
        run().backward(torch.ones(q.shape[:-1] + v.shape[-1:]))


def inputs(n: int, d: int, passes: str, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    grad = passes != "forward"
    return [torch.randn(1, n, d, generator=g).requires_grad_(grad) for _ in range(3)]


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def child_memory(version: str, passes: str, n: int, d: int, block_size: int) -> None:
    torch.set_num_threads(1)
    call(version, passes, *inputs(256, d, passes), block_size)  # one-off set-up, not counted
    q, k, v = inputs(n, d, passes)
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS
    before = status_kib("VmRSS")
    call(version, passes, q, k, v, block_size)
    print(json.dumps({"peak_mib": (status_kib("VmHWM") - before) / 1024}))


def child_time(n: int, d: int, block_size: int, repeats: int) -> None:
    torch.set_num_threads(1)
    result = {}
    for passes in PASSES:
        q, k, v = inputs(n, d, passes)
        pairs = []
        for r in range(repeats + 1):  # the first pair warms up
            times = []
            for version in VERSIONS:
                start = time.perf_counter()
                call(version, passes, q, k, v, block_size)
                times.append(time.perf_counter() - start)
            if r:
                pairs.append(times)
        result[passes] = {
            "plain_s": statistics.median(p for p, _ in pairs),
            "blocked_s": statistics.median(b for _, b in pairs),
            "ratio": statistics.median(b / p for p, b in pairs),
        }
    with torch.no_grad():
        q, k, v = inputs(n, d, "forward")
        diff = float((attention(q, k, v)[0] - memory_efficient_attention(
            q, k, v, block_size=block_size)).abs().max())
    result["max_abs_difference"] = diff
    print(json.dumps(result))


def run_child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--block-size", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.child[0] == "memory":
            child_memory(args.child[1], args.child[2], args.n, args.d, args.block_size)
        else:
            child_time(args.n, args.d, args.block_size, args.repeats)
        return 0

    common = ["--n", str(args.n), "--d", str(args.d), "--block-size", str(args.block_size),
              "--repeats", str(args.repeats)]
    print(f"n = {args.n}, d = {args.d}, float32, one thread, block_size = {args.block_size}")
    peaks = {}
    for passes in PASSES:
        for version in VERSIONS:
            peaks[version, passes] = run_child("memory", version, passes, *common)["peak_mib"]
            print(f"  peak memory rise, {version:7s} {passes:16s}: "
                  f"{peaks[version, passes]:7.1f} MiB")
    timing = run_child("time", *common)
    ok = timing["max_abs_difference"] <= 1e-5
    print(f"  largest |plain - blocked| of the outputs: {timing['max_abs_difference']:.1e}")
    for passes in PASSES:
        memory_ratio = peaks["blocked", passes] / peaks["plain", passes]
        t = timing[passes]
        print(f"{passes:16s}: memory ratio blocked/plain {memory_ratio:.3f} "
              f"(target <= {MEMORY_TARGET}), time ratio {t['ratio']:.2f} "
              f"(target <= {TIME_TARGET}; medians {t['blocked_s']:.2f} s / {t['plain_s']:.2f} s)")
        ok &= memory_ratio <= MEMORY_TARGET and t["ratio"] <= TIME_TARGET
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
