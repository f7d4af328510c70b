"""Time the parts of ``make test``, so that the next change that slows the suite shows.

    python tools/test_times.py run PART -- COMMAND...   run COMMAND, record its times
    python tools/test_times.py report                   the table of the last runs

``run`` appends one line to ``_build/test-times.tsv``: the part, its wall-clock seconds,
the CPU seconds of the command and of every process it waited for (user + system), the
load average (1 minute) before and after, and the exit status; it exits with the
command's status. ``make test`` clears the file first and prints the ``report`` at the
end, pass or fail; ``make test-times`` prints it again.

The CPU seconds are the floor of the wall time on a quiet machine with N cores: a part
that uses both cores of a 2-core machine shows a CPU time near twice its wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

LOG = Path(__file__).resolve().parents[1] / "_build" / "test-times.tsv"
FIELDS = ("part", "wall_s", "cpu_s", "load_before", "load_after", "status")


def load() -> float:
    return os.getloadavg()[0]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(part: str, command: list[str]) -> int:
    if not command:
        raise SystemExit("test_times.py run: no command after --")
    before, cpu, begun = load(), children_cpu(), time.monotonic()
    status = subprocess.call(command)
    row = (part, f"{time.monotonic() - begun:.1f}", f"{children_cpu() - cpu:.1f}",
           f"{before:.2f}", f"{load():.2f}", str(status))
    LOG.parent.mkdir(parents=True, exist_ok=True)
    new = not LOG.exists()
    with LOG.open("a") as f:
        if new:
            f.write("\t".join(FIELDS) + "\n")
        f.write("\t".join(row) + "\n")
    return status


def report() -> str:
    if not LOG.exists():
        return f"no times recorded yet ({LOG} is written by make test)"
    rows = [line.split("\t") for line in LOG.read_text().splitlines()[1:] if line]
    lines = [f"{'part':<18} {'wall':>8} {'cpu':>8}   load before/after  status"]
    for part, wall, cpu, before, after, status in rows:
        lines.append(f"{part:<18} {float(wall):>7.0f}s {float(cpu):>7.0f}s"
                     f"   {before:>5} / {after:<5}      "
                     f"{'ok' if status == '0' else 'FAILED ' + status}")
    wall = sum(float(r[1]) for r in rows)
    cpu = sum(float(r[2]) for r in rows)
    lines.append(f"{'total':<18} {wall:>7.0f}s {cpu:>7.0f}s   "
                 f"({wall / 60:.1f} min; {os.cpu_count()} cores)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    timed = sub.add_parser("run", help="run a command and record its times")
    timed.add_argument("part")
    sub.add_parser("report", help="print the table of the recorded times")
    sub.add_parser("clear", help="forget the recorded times")
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.action == "run":
        return run(args.part, command)
    if args.action == "clear":
        LOG.unlink(missing_ok=True)
        return 0
    print(report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
