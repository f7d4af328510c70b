"""Grade a folder of submissions with ``otter run``, under time limits, into one CSV.

    .venv/bin/python tools/grade_folder.py AUTOGRADER.zip SUBMISSIONS/ OUTPUT/

Every ``*.ipynb`` or ``*.zip`` (``grader.export()``) in SUBMISSIONS is one student,
named after the file. Each is graded by ``otter run`` in its own process, which is ended
after ``--timeout`` seconds (the autograder's own time limits per question come first),
so one submission can neither stop nor slow down the others. OUTPUT receives:

- ``grades.csv``: one row per student: every question's points, the autograded sum, the
  written points (from ``--marks``, blank until marked), the total and the points
  possible, and the status of the grading run;
- ``written/STUDENT.md``: the student's written answers, each under its question's
  prompt, for marking by hand;
- ``written_marks.csv``: a form for those marks (one row per student, one column per
  written question), written only if it does not exist yet; fill it in and pass it as
  ``--marks``;
- ``feedback/STUDENT.txt``: every test's message, hidden tests included, to release to
  the student once grades are out;
- ``results/STUDENT/results.json`` and ``logs/STUDENT.txt``: otter's output.

``--written-only`` skips the grading and only exports the written answers (for a class
graded with ``otter grade`` in Docker). ``--marks M.csv`` adds the hand-given written
marks to the totals; ``--reuse`` keeps the results of students already graded.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent / "grading"))
from seqlearn_grading.notebook import written_answers  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("autograder", type=Path,
                        help="the autograder zip of otter assign")
    parser.add_argument("submissions", type=Path,
                        help="a folder of .ipynb or .zip files")
    parser.add_argument("output", type=Path, help="where grades.csv and the rest go")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds after which a submission's grading is stopped "
                             "(default 900)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="submissions graded at the same time (default 1)")
    parser.add_argument("--marks", type=Path, default=None,
                        help="a CSV of hand-given written marks (the form "
                             "written_marks.csv)")
    parser.add_argument("--written-only", action="store_true",
                        help="only export the written answers, grade nothing")
    parser.add_argument("--reuse", action="store_true",
                        help="keep the results of students that were graded already")
    return parser.parse_args(argv)


def configuration(autograder: Path) -> tuple[str, dict[str, float]]:
    """The assignment's name and its written questions' points, from the autograder
    zip."""
    with zipfile.ZipFile(autograder) as archive:
        config = json.loads(archive.read("otter_config.json"))
    written: dict[str, float] = {}
    for entry in config.get("plugins", []):
        if isinstance(entry, dict):
            for settings in entry.values():
                written.update((settings or {}).get("written", {}))
    return config.get("assignment_name", autograder.stem), written


def notebook_of(submission: Path) -> nbformat.NotebookNode | None:
    """The notebook of a submission: the file itself, or the one inside an exported
    zip."""
    try:
        if submission.suffix == ".zip":
            with zipfile.ZipFile(submission) as archive:
                names = [n for n in archive.namelist() if n.endswith(".ipynb")
                         and "/." not in n and not n.startswith(".")]
                if not names:
                    return None
                return nbformat.reads(archive.read(names[0]).decode(), as_version=4)
        return nbformat.read(submission, as_version=4)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
        return None


def export_written(student: str, assignment: str, submission: Path, out: Path) -> None:
    nb = notebook_of(submission)
    lines = [f"# {student}: written answers, {assignment}", ""]
    if nb is None:
        lines.append("The submission holds no readable notebook.")
    else:
        answers = written_answers(nb)
        if not answers:
            lines.append("No written question found in the submission.")
        for question, prompt, answer in answers:
            lines += [f"## {question}", "", prompt, "", "### Answer", "",
                      answer or "(no answer)", ""]
    out.write_text("\n".join(lines) + "\n")


def grade_one(submission: Path, args: argparse.Namespace) -> dict:
    """Run ``otter run`` on one submission in its own process group, with a time
    limit."""
    student = submission.stem
    results = args.output / "results" / student
    results.mkdir(parents=True, exist_ok=True)
    results_json = results / "results.json"
    timing = results / "seconds.txt"
    if args.reuse and results_json.is_file():
        try:
            seconds = float(timing.read_text())
        except (OSError, ValueError):
            seconds = float("nan")
        return {"student": student, "status": "ok (reused)", "seconds": seconds}
    results_json.unlink(missing_ok=True)
    command = [sys.executable, "-m", "otter", "run", "--no-logo", "-a",
               str(args.autograder.resolve()), "-o", str(results.resolve()),
               str(submission.resolve())]
    log = args.output / "logs" / f"{student}.txt"
    begun = time.monotonic()
    with open(log, "w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            process.wait(args.timeout)
            status = "ok" if results_json.is_file() else \
                f"failed (exit code {process.returncode}, see log)"
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            status = f"stopped after {args.timeout:g} s"
    seconds = time.monotonic() - begun
    timing.write_text(f"{seconds:.1f}\n")           # what --reuse reports later
    return {"student": student, "status": status, "seconds": seconds}


def read_marks(path: Path | None) -> dict[str, dict[str, float]]:
    if path is None:
        return {}
    marks: dict[str, dict[str, float]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            student = row.pop("student", "")
            marks[student] = {q: float(v) for q, v in row.items()
                              if v not in (None, "")}
    return marks


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    assignment, written = configuration(args.autograder)
    submissions = sorted(p for p in args.submissions.iterdir()
                         if p.suffix in (".ipynb", ".zip")
                         and not p.name.startswith("."))
    for sub in ("results", "logs", "written", "feedback"):
        (args.output / sub).mkdir(parents=True, exist_ok=True)
    for submission in submissions:
        export_written(submission.stem, assignment, submission,
                       args.output / "written" / f"{submission.stem}.md")
    form = args.output / "written_marks.csv"
    if written and not form.exists():
        with open(form, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["student", *written])
            writer.writerows([[p.stem] + [""] * len(written) for p in submissions])
    if args.written_only:
        print(f"written answers of {len(submissions)} students in "
              f"{args.output / 'written'}")
        return 0
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        runs = list(pool.map(lambda p: grade_one(p, args), submissions))
    marks = read_marks(args.marks)
    rows, questions = [], []
    for run in runs:
        student = run["student"]
        path = args.output / "results" / student / "results.json"
        tests = json.loads(path.read_text())["tests"] if path.is_file() else []
        scores = {t["name"]: (t.get("score"), t.get("max_score")) for t in tests
                  if "max_score" in t}
        for question in scores:
            if question not in questions:
                questions.append(question)
        feedback = [t.get("output", "") for t in tests
                    if t.get("output") and t.get("name") != "Public Tests"]
        text = "\n\n".join(feedback) + "\n" if feedback else \
            f"Not graded: {run['status']}\n"
        (args.output / "feedback" / f"{student}.txt").write_text(text)
        rows.append((run, scores))
    for question in written:
        if question not in questions:
            questions.append(question)
    questions.sort(key=lambda q: (len(q), q))
    auto_questions = [q for q in questions if q not in written]
    possible = {q: 0.0 for q in questions}
    for _, scores in rows:
        for q, (_, most) in scores.items():
            possible[q] = max(possible[q], float(most or 0))
    possible.update({q: float(p) for q, p in written.items()})
    unmarked = []
    with open(args.output / "grades.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *questions, "autograded", "written", "total",
                         "possible", "status", "seconds"])
        for run, scores in rows:
            student = run["student"]
            own = marks.get(student, {})
            cells, auto, hand = [], 0.0, None
            for q in questions:
                if q in written:
                    mark = own.get(q)
                    cells.append("" if mark is None else f"{mark:g}")
                    if mark is None and student not in unmarked:
                        unmarked.append(student)
                    if mark is not None:
                        hand = (hand or 0.0) + mark
                else:
                    score = scores.get(q, (0.0, None))[0] or 0.0
                    auto += float(score)
                    cells.append(f"{float(score):g}")
            total = auto + (hand or 0.0)
            writer.writerow([student, *cells, f"{auto:g}",
                             "" if hand is None else f"{hand:g}", f"{total:g}",
                             f"{sum(possible.values()):g}", run["status"],
                             f"{run['seconds']:.1f}"])
    graded = sum(run["status"].startswith("ok") for run, _ in rows)
    print(f"{graded} of {len(rows)} submissions graded; marks in "
          f"{args.output / 'grades.csv'}")
    print(f"autograded questions: {', '.join(auto_questions)}; written: "
          f"{', '.join(written) or 'none'} "
          f"(marks from {args.marks or 'no --marks file'})")
    if unmarked:
        print(f"warning: {len(unmarked)} of {len(rows)} students have written answers "
              f"without a mark, which their totals count as 0: "
              f"{', '.join(unmarked[:10])}{' ...' if len(unmarked) > 10 else ''} "
              f"(fill in {form} and pass it as --marks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
