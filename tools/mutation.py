"""Mutation testing of ``seqlearn``: does a test or a chapter's check fail when the code is wrong?

mutmut 3 (pinned in ``tools/requirements-mutation.txt``) copies ``seqlearn/`` into ``mutants/``
with every function rewritten as a trampoline that runs either the original or one of its
mutants (``+`` -> ``-``, ``<`` -> ``<=``, ``0`` -> ``1``, a dropped argument, ...), chosen by
the environment variable ``MUTANT_UNDER_TEST``. Two modes use those mutants:

``package``  mutmut runs, for each mutant of the model modules, the package tests that call the
             mutated function (``tests/package``); a mutant is *killed* when one of them fails.
``chapter``  for each mutant of the functions a chapter teaches (``TEACHES`` below), the chapter
             runs top to bottom under ``nbval --nbval-lax`` in a kernel that imports the mutated
             copy; a mutant is killed when a cell raises (an ``assert`` or
             ``torch.testing.assert_close`` of an executable check). Outputs are not compared:
             a changed number that no check looks at does not count as a kill.

Usage (``make mutation`` runs ``package`` and then ``chapter`` for every chapter)::

    python tools/mutation.py package [--modules conv gated ...] [--sample N] [-j 2]
    python tools/mutation.py chapter bptt [--sample N] [-j 2]
    python tools/mutation.py report            # tables from the stored results

In ``chapter`` mode, mutants that touch only the validation of arguments (see :func:`kind`) are
left out before sampling, by a rule read from each mutant's diff.

``--sample N`` draws N mutants per module / chapter with a fixed seed (an estimate with a
binomial error, printed); without it every mutant runs. Results go to ``mutants/`` (mutmut's own
records) and ``mutants/chapters/<name>.json``; ``report`` prints the tables and every survivor
with its diff, sorted into the kinds explained in ``KINDS``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mutmut.stats import status_by_exit_code as STATUS  # exit code -> "killed", ...

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "mutants"
PYTHON = sys.executable
MUTMUT = [PYTHON, "-m", "mutmut"]

# The modules that hold models and the algorithms the chapters derive (not plotting, widgets,
# seeding or the validation helpers, which every test calls).
MODEL_MODULES = [
    "conv", "recurrent", "bptt.rnn", "bptt.lstm", "bptt.clip", "bptt.params", "bptt.truncated",
    "bptt.counter",
    "gated", "multiplicative", "unroll", "scan", "causal", "linear_attention", "mingru",
    "attention", "scores", "seq2seq", "transformer", "transformer_layers", "layernorm",
    "memory", "associative", "local_attention", "online_softmax", "losses", "train",
    "masks", "positional", "conv_encoder", "decoding", "metrics", "ntm", "copy_task",
    "language_model", "ngram", "sampling", "char_text",
]

# What each chapter teaches: "module.function", "module.Class" (all its methods) or "module"
# (every function of the module). A mutant of anything else is not the chapter's business.
TEACHES: dict[str, list[str]] = {
    "sequences_and_convolution": ["conv"],
    "recurrent_networks": [
        "recurrent.past_window", "recurrent.NARX", "recurrent.context_step",
        "recurrent.exponential_trace", "recurrent.JordanNetwork", "recurrent.ElmanCell",
        "recurrent.RecurrentCell", "recurrent.scan_cell", "recurrent.run_stack",
        "recurrent.StackedRNN", "recurrent.ElmanRNN",
    ],
    "bptt": ["bptt.rnn", "bptt.clip", "bptt.params.orthogonal_matrix", "bptt.params.init_params",
             "bptt.truncated", "bptt.counter"],
    "gru": ["gated.GRUCell", "gated.GRU", "multiplicative", "data.hold.sample_and_hold"],
    "lstm": ["gated.LSTMCell", "gated.LSTM", "bptt.lstm"],
    "gru_to_attention": ["unroll", "causal", "scan", "linear_attention", "mingru"],
    # the model, its loss and score (seqlearn.losses) and its training loop
    # (label smoothing is the Transformer chapter's)
    "seq2seq": ["seq2seq", "losses.masked_cross_entropy", "losses._check_batch",
                "losses.exact_match", "train.fit_seq2seq", "train._seq2seq_loss"],
    # the attention path of the seq2seq model (its other options are the seq2seq chapter's)
    "attention": ["scores", "attention.masked_softmax", "attention.attend",
                  "attention.attention", "seq2seq.Seq2Seq._context", "seq2seq.Seq2Seq.step",
                  "seq2seq.Seq2Seq.forward", "seq2seq.Seq2Seq.greedy_decode",
                  "seq2seq.Seq2Seq.encode", "seq2seq.Seq2Seq._make_score",
                  "conv_encoder"],
    # complexity: the measures the chapter uses (not the timer, nor sequential_steps)
    "self_attention": ["attention", "masks", "online_softmax", "local_attention",
                       "complexity.jacobian_pattern", "complexity.max_path_length",
                       "complexity.graph_depth", "complexity.op_input_elements",
                       "complexity.loglog_slope",
                       "complexity.saved_tensor_bytes", "complexity._through",
                       "table1", "saturation", "long_range"],
    "transformer": ["transformer", "positional", "transformer_layers", "layernorm",
                    "warmup", "decoding.transformer_decoder", "losses._label_smoothed"],
    "memory_networks": ["memory", "associative", "train.fit_memn2n", "train._Linear"],
    "decoding": ["decoding.StepDecoder", "decoding._leaves", "decoding._rows",
                 "decoding.BeamResult", "decoding.normalised_score", "decoding.beam_search",
                 "decoding.seq2seq_decoder", "metrics"],
    "language_model": ["language_model", "ngram", "sampling", "char_text"],
    "ntm": ["ntm", "copy_task"],
}

# Kinds of survivor, recognised from the diff; the report explains each.
KINDS = {
    "message": "changes only the text of an error report (the error is still raised); "
               "chapter mode does not draw these",
    "validation": "changes only the checks of the arguments (valid inputs compute the same): "
                  "the package's property tests feed invalid inputs; chapter mode does not "
                  "draw these",
    "other": "read the diff: a gap in the checks, or an equivalent mutant",
}

_NAME = re.compile(r"^seqlearn\.(?P<module>[\w.]+)\.x(?:ǁ(?P<cls>\w+)ǁ|_)(?P<func>\w+?)"
                   r"__mutmut_(?P<n>\d+)$")


def parse(mutant: str) -> tuple[str, str | None, str]:
    """``seqlearn.gated.xǁGRUCellǁforward__mutmut_3`` -> ``("gated", "GRUCell", "forward")``."""
    match = _NAME.match(mutant)
    if match is None:
        raise ValueError(f"not a mutmut mutant name: {mutant!r}")
    return match["module"], match["cls"], match["func"]


def belongs(mutant: str, targets: list[str]) -> bool:
    """Whether ``mutant`` mutates one of ``targets`` ("module", "module.Class", "module.func")."""
    module, cls, func = parse(mutant)
    names = {module, f"{module}.{cls or func}", f"{module}.{cls}.{func}" if cls else ""}
    return any(target in names for target in targets)


def _env() -> dict[str, str]:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("MUTANT_UNDER_TEST", None)
    return env


def generate() -> None:
    """Create ``mutants/`` (mutmut's copy with every mutant) without running any test."""
    code = ("import os, sys; from pathlib import Path; import mutmut.__main__ as m;"
            "from mutmut.mutation.trampoline import set_mutant_under_test;"
            "set_mutant_under_test('mutant_generation'); os.makedirs('mutants', exist_ok=True);"
            "m.copy_src_dir(); m.copy_also_copy_files(); m.setup_source_paths();"
            "m.store_lines_covered_by_tests(); m.create_mutants(os.cpu_count() or 1)")
    subprocess.run([PYTHON, "-c", code], cwd=ROOT, env=_env(), check=True,
                   stdout=subprocess.DEVNULL)


def records() -> dict[str, int | None]:
    """mutmut's exit code of every mutant (``None``: not run yet), from ``mutants/**.meta``."""
    codes: dict[str, int | None] = {}
    for meta in sorted((MUTANTS / "seqlearn").rglob("*.py.meta")):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def diffs(mutants: list[str]) -> dict[str, str]:
    """The diff of each mutant against the original function (mutmut's ``show``)."""
    code = ("import json, sys; from mutmut.mutation.diff_apply import get_diff_for_mutant;"
            "names = json.load(sys.stdin);"
            "print(json.dumps({m: get_diff_for_mutant(m) for m in names}))")
    out = subprocess.run([PYTHON, "-c", code], cwd=ROOT, env=_env(), text=True,
                         input=json.dumps(mutants), capture_output=True, check=True)
    return json.loads(out.stdout)


_VALIDATION = re.compile(r"\b_?check_\w+\(|\braise\b|Error\(|^\s*for \w+, name in ")


def _changed(mutant_diff: str) -> tuple[list[str], list[str]]:
    lines = mutant_diff.splitlines()
    removed = [x[1:] for x in lines if x.startswith("-") and not x.startswith("---")]
    added = [x[1:] for x in lines if x.startswith("+") and not x.startswith("+++")]
    return removed, added


def _guards(mutant_diff: str, sign: str = "-") -> set[str]:
    """Lines the mutant removes (``sign="-"``) or adds (``"+"``) that are the condition of a
    guard whose body raises: an ``if`` line followed (after the changed lines) by a ``raise``."""
    lines = mutant_diff.splitlines()
    found = set()
    for i, line in enumerate(lines):
        if not (line.startswith(sign) and not line.startswith(sign * 3)):
            continue
        if not re.match(r"\s*(el)?if\b", line[1:]):
            continue
        after = next((x for x in lines[i + 1:] if not x.startswith(("-", "+"))), "")
        if re.match(r"\s*raise\b", after[1:]):
            found.add(line[1:])
    return found


_STRINGS = re.compile(r"f?([\"'])(?:\\.|(?!\1).)*\1")


def _statements(lines: list[str]) -> list[str]:
    """For each line of a fragment of code, the first line of the statement it belongs to:
    the line itself, or the line that opened the bracket a continuation line sits in."""
    first, depth, start = [], 0, ""
    for line in lines:
        if depth <= 0:
            depth, start = 0, line
        first.append(start)
        code = _STRINGS.sub('""', line).split("#")[0]
        depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
    return first


def _in_validation(mutant_diff: str, sign: str) -> bool:
    """Whether every line the mutant removes (``sign="-"``) or adds (``"+"``) belongs to a
    statement of argument validation: a ``check_*`` call or a ``raise`` (continuation lines of
    a call that runs over several lines included), or the condition of an ``if`` whose body
    raises."""
    other = "+" if sign == "-" else "-"
    lines = [x for x in mutant_diff.splitlines()
             if not x.startswith(("---", "+++", "@@")) and not x.startswith(other)]
    marks = [x[:1] for x in lines]
    starts = _statements([x[1:] for x in lines])
    guards = _guards(mutant_diff, sign)
    changed = [(x[1:], start) for x, mark, start in zip(lines, marks, starts) if mark == sign]
    return all(_VALIDATION.search(start) or line in guards for line, start in changed)


def kind(mutant_diff: str) -> str:
    """Sort a mutant by what it changes.

    ``message``: only string literals of an error report (the text of a ``raise``, the argument
    name handed to a ``check_*`` validator); the error is still raised. ``validation``: other
    changes confined to the validation of arguments (``check_*`` calls, ``raise``, the loops over
    argument names, the condition of an ``if`` whose body raises; a call that runs over several
    lines counts as a whole); valid inputs compute the same. ``other``: the computation itself.
    """
    removed, added = _changed(mutant_diff)
    if not removed:
        return "other"
    if not (_in_validation(mutant_diff, "-") and _in_validation(mutant_diff, "+")):
        return "other"
    if len(removed) == len(added) and all(
            _STRINGS.sub('""', a) == _STRINGS.sub('""', b) for a, b in zip(removed, added)):
        return "message"
    return "validation"


def validator(mutant: str) -> bool:
    """Whether ``mutant`` mutates a function whose whole job is to validate arguments
    (``check_*``, ``_check_*``): valid inputs pass it unchanged."""
    return parse(mutant)[2].lstrip("_").startswith("check")


def sample(names: list[str], n: int | None, seed: str) -> list[str]:
    if n is None or n >= len(names):
        return sorted(names)
    return sorted(random.Random(seed).sample(sorted(names), n))


def share(killed: int, total: int) -> str:
    """Killed share with its binomial standard error (for samples)."""
    if total == 0:
        return "—"
    p = killed / total
    return f"{100 * p:.1f} % ± {100 * math.sqrt(p * (1 - p) / total):.1f}"


# --- package mode ----------------------------------------------------------------------------

def module_of(mutant: str) -> str:
    return parse(mutant)[0]


def run_package(modules: list[str], n: int | None, jobs: int) -> None:
    generate()
    every = records()
    chosen = []
    for module in modules:
        names = [m for m in every if module_of(m) == module]
        chosen += sample(names, n, f"package:{module}")
    if not chosen:
        raise SystemExit(f"no mutants in modules {modules}")
    print(f"{len(chosen)} mutants of {len(modules)} modules", flush=True)
    # mutmut re-runs mutants named explicitly; one run, since each starts with the clean tests
    # (all ~10,000 names of the model modules fit on a command line)
    subprocess.run(MUTMUT + ["run", "--max-children", str(jobs)] + chosen, cwd=ROOT,
                   env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    (MUTANTS / "package_selection.json").write_text(json.dumps(chosen))
    report_package()


def report_package() -> None:
    chosen = json.loads((MUTANTS / "package_selection.json").read_text())
    codes = records()
    by_module: dict[str, list[str]] = {}
    for m in chosen:
        by_module.setdefault(module_of(m), []).append(m)
    survivors = [m for m in chosen if STATUS[codes.get(m)] == "survived"]
    text = diffs(survivors) if survivors else {}
    kinds = {m: kind(d) for m, d in text.items()}
    print("\n## Package tests against mutants of the model modules\n")
    print("A mutant that only changes the text of an error report (*message*) still raises "
          "the error; the last column leaves those out.\n")
    print("| module | mutants (run / all) | killed | timeout | survived (message) "
          "| killed share | without messages |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for module, names in sorted(by_module.items()):
        st = [STATUS[codes.get(m)] for m in names]
        killed, timeout = st.count("killed"), st.count("timeout")
        survived = [m for m, s in zip(names, st) if s == "survived"]
        message = sum(kinds[m] == "message" for m in survived)
        run = killed + timeout + len(survived)
        total = sum(module_of(m) == module for m in codes)
        print(f"| {module} | {run} / {total} | {killed} | {timeout} | {len(survived)} "
              f"({message}) | {share(killed + timeout, run)} | "
              f"{share(killed + timeout, run - message)} |")
    print_survivors(survivors, text)


# --- chapter mode ----------------------------------------------------------------------------

def run_mutant(chapter: Path, mutant: str, timeout: float) -> str:
    env = _env()
    env["MUTANT_UNDER_TEST"] = mutant
    env["PYTHONPATH"] = os.pathsep.join([str(MUTANTS), env.get("PYTHONPATH", "")])
    cmd = [PYTHON, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--nbval-lax",
           "--nbval-cell-timeout", str(int(timeout)), str(chapter)]
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout * 3)
    except subprocess.TimeoutExpired:
        return "timeout"
    if proc.returncode == 0:
        return "survived"
    if "Timeout" in proc.stdout and "Cell execution timed out" in proc.stdout:
        return "timeout"
    return "killed"


def run_chapter(name: str, n: int | None, jobs: int, survivors: bool = False) -> None:
    if name not in TEACHES:
        raise SystemExit(f"chapter must be one of {sorted(TEACHES)}, got {name!r}")
    chapter = ROOT / "chapters" / f"{name}.ipynb"
    generate()
    candidates = [m for m in records() if belongs(m, TEACHES[name])]
    text = diffs(candidates)
    # The rule, fixed before any mutant runs: a chapter runs its functions on valid inputs and
    # leaves argument validation to the package tests, so mutants confined to validation
    # (kind "message" or "validation", read from the diff alone) are not drawn at all.
    names = [m for m in candidates if kind(text[m]) == "other" and not validator(m)]
    chosen = sample(names, n, f"chapter:{name}")
    earlier: dict[str, str] = {}
    if survivors:
        # After checks were added (none removed), the mutants they killed stay killed: run
        # only the stored sample's survivors again. The sample must be the same one.
        path = MUTANTS / "chapters" / f"{name}.json"
        if not path.exists():
            raise SystemExit(f"--survivors needs an earlier run of {name}: {path} is missing")
        earlier = json.loads(path.read_text())["results"]
        if sorted(earlier) != chosen:
            raise SystemExit(f"--survivors: the stored sample of {name} is not this one "
                             "(TEACHES, the sample size or the mutants changed): run it all")
        chosen = [m for m, status in earlier.items() if status == "survived"]
    # the unmutated chapter must pass, and its time sets the time-out
    start = time.perf_counter()
    if run_mutant(chapter, "", 600) != "survived":
        raise SystemExit(f"{chapter} fails without any mutant: fix it first")
    clean = time.perf_counter() - start
    print(f"{name}: {len(chosen)} of {len(names)} mutants ({len(candidates) - len(names)} that "
          f"touch only argument validation left out); clean run {clean:.0f} s", flush=True)
    results: dict[str, str] = dict(earlier)
    with ThreadPoolExecutor(jobs) as pool:
        futures = {m: pool.submit(run_mutant, chapter, m, max(60.0, 3 * clean))
                   for m in chosen}
        for i, (m, future) in enumerate(futures.items(), 1):
            results[m] = future.result()
            print(f"  [{i}/{len(chosen)}] {results[m]:8s} {m}", flush=True)
    out = MUTANTS / "chapters"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(
        {"chapter": name, "teaches": TEACHES[name], "mutants": len(names),
         "validation_mutants_left_out": len(candidates) - len(names),
         "sample": n, "results": results}, indent=1))
    report_chapters([name])


def report_chapters(names: list[str]) -> None:
    print("\n## Chapter checks against mutants of the code each chapter teaches\n")
    print("Mutants confined to the validation of arguments (*message*, *validation*, read "
          "from the diff) are left out before sampling: a chapter runs its functions on valid "
          "inputs, and the package tests check validation. The killed share counts every other "
          "sampled mutant of the functions the chapter teaches.\n")
    print("| chapter | mutants (run / all) | killed | timeout | survived | killed share |")
    print("|---|---:|---:|---:|---:|---:|")
    survivors: list[str] = []
    for name in names:
        path = MUTANTS / "chapters" / f"{name}.json"
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        results = data["results"]
        st = list(results.values())
        killed, timeout, survived = (st.count(s) for s in ("killed", "timeout", "survived"))
        survivors += [m for m, s in results.items() if s == "survived"]
        print(f"| {name} | {len(st)} / {data['mutants']} | {killed} | {timeout} | "
              f"{survived} | {share(killed + timeout, len(st))} |")
    print_survivors(survivors, diffs(survivors) if survivors else {})


def print_survivors(survivors: list[str], text: dict[str, str]) -> None:
    """Every survivor's kind and diff (``text``: diffs of at least the survivors, :func:`diffs`)."""
    if not survivors:
        return
    kinds = {m: kind(text[m]) for m in survivors}
    print()
    for k, meaning in KINDS.items():
        print(f"- {k}: {sum(v == k for v in kinds.values())} survivors ({meaning})")
    print("\n### Survivors\n")
    for m in sorted(survivors, key=lambda m: (kinds[m], m)):
        print(f"#### {m} ({kinds[m]})\n\n```diff\n{text[m].strip()}\n```\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    pkg = sub.add_parser("package")
    pkg.add_argument("--modules", nargs="+", default=MODEL_MODULES)
    chap = sub.add_parser("chapter")
    chap.add_argument("name")
    chap.add_argument("--survivors", action="store_true",
                      help="run only the survivors of the stored sample again (after "
                           "adding checks; the mutants killed before stay killed)")
    for p in (pkg, chap):
        p.add_argument("--sample", type=int, default=None)
        p.add_argument("-j", "--jobs", type=int, default=1)
    sub.add_parser("report")
    args = parser.parse_args()
    if args.mode == "package":
        run_package(args.modules, args.sample, args.jobs)
    elif args.mode == "chapter":
        run_chapter(args.name, args.sample, args.jobs, args.survivors)
    else:
        if (MUTANTS / "package_selection.json").exists():
            report_package()
        report_chapters(sorted(TEACHES))


if __name__ == "__main__":
    main()
