"""Fuzz every public name of seqlearn at the edges of its domain; print what is wrong.

    .venv/bin/python tools/fuzz_edges.py                # the matrix at its own sizes
    .venv/bin/python tools/fuzz_edges.py --rounds 20    # and 20 rounds of random sizes
    .venv/bin/python tools/fuzz_edges.py --name attention --verbose

Every call comes from the edge-case matrix of the package tests
(``tests/package/edges.py``, rows in ``tests/package/edge_entries.py``): one valid call
per public name, changed one argument or one dimension at a time (sizes 0 and 1,
float16/bfloat16/integer dtypes, +-inf and NaN entries, NumPy arrays, non-bool flags,
bad ints and reals, callables returning bad values, broadcasting shapes, bad token ids,
bad masks, wrongly typed objects). A random round draws every dimension from 1..6 and a new
seed, so positions and values change too (a draw that breaks a constraint between sizes,
such as ``d_model % num_heads``, is skipped). An outcome is wrong when
:func:`edges.verdict` says so: a crash other than ValueError/TypeError, an error that
does not name the argument, NaN from finite input, NaN swallowed where the entry
matters, an argument silently broadcast into a different answer, reduced precision far
from float64. Exit status 1 when anything is wrong.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import random
import sys
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "package"))

import torch  # noqa: E402

import edges  # noqa: E402
from edge_entries import ENTRIES  # noqa: E402


def fuzz(names: list[str], rounds: int, seed: int, verbose: bool) -> int:
    rand = random.Random(seed)
    problems: dict[tuple[str, str, str], list[str]] = collections.defaultdict(list)
    calls = 0
    for name in names:
        entry = ENTRIES[name]
        variants = [(0, dict(entry.dims))]
        for _ in range(rounds):
            variants.append(
                (rand.randrange(10**6), {d: rand.randint(1, 6) for d in entry.dims})
            )
        for case_seed, dims in variants:
            base = edges.run(entry, None, case_seed, dims)
            calls += 1
            if base.unbuilt or (
                isinstance(base.error, (ValueError, TypeError)) and case_seed
            ):
                continue  # random sizes that break a constraint (d_model % heads, ...)
            if base.error is not None:
                key = (name, "base", f"valid call fails: {type(base.error).__name__}")
                problems[key].append(f"dims={dims}: {str(base.error)[:120]}")
                continue
            for case in edges.cases(entry, dims):
                calls += 1
                verdict = edges.verdict(entry, case, case_seed, base)
                if verdict is not None:
                    key = (name, case.kind, verdict.split(":")[0])
                    problems[key].append(f"{case.label} dims={case.dims}: {verdict}")
    for (name, kind, what), where in sorted(problems.items()):
        print(f"{name} [{kind}] {what} ({len(where)}x)")
        for line in where[: (len(where) if verbose else 1)]:
            print(f"    {line}")
    print(
        f"{calls} calls of {len(names)} public names: {len(problems)} distinct problems"
    )
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=0, help="random rounds per name")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="", help="only names containing this string")
    parser.add_argument(
        "--verbose", action="store_true", help="list every failing input"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    names = [n for n in sorted(ENTRIES) if args.name in n]
    return fuzz(names, args.rounds, args.seed, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
