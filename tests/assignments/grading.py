"""What the assignment tests share: the masters' names, a student's run, otter's
grading.

Each job imports otter and starts a Jupyter kernel and a sandbox, which takes seconds,
so the fixture in ``conftest.py`` runs the jobs in a pool of worker processes and keeps
only plain results (numbers and strings) for the tests to look at.
"""

from __future__ import annotations

import contextlib
import csv
import glob
import io
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

ASSIGNMENTS = Path(__file__).resolve().parents[2] / "assignments"
ROOT = ASSIGNMENTS.parent


def master_names() -> list[str]:
    """The assignments, named after their master notebooks in assignments/."""
    return sorted(p.stem for p in ASSIGNMENTS.glob("*.ipynb"))


def quiet() -> None:
    """Worker initializer: otter and Jupyter print a lot; keep the test output
    readable."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def run_like_a_student(student_dir: str, name: str) -> dict:
    """Run the untouched student notebook top to bottom, as a student would, in a
    scratch copy.

    Returns the errors of the run (cell source, exception name and message) and the text
    that every ``grader.check`` cell printed.
    """
    import nbformat
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory() as scratch:
        work = Path(shutil.copytree(student_dir, Path(scratch) / "student"))
        nb = nbformat.read(work / f"{name}.ipynb", as_version=4)
        NotebookClient(nb, timeout=300, allow_errors=True, kernel_name="python3",
                       resources={"metadata": {"path": str(work)}}).execute()
    errors, checks = [], []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.outputs:
            if output.output_type == "error":
                errors.append((cell.source[:80], output.ename, output.evalue))
        if cell.source.startswith("grader.check("):
            checks.append((cell.source, "".join(
                str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                for o in cell.outputs)))
    return {"errors": errors, "checks": checks}


def autograder_zip(folder: str) -> str:
    """The autograder zip that ``otter assign`` wrote into ``folder/autograder``."""
    zips = glob.glob(os.path.join(folder, "autograder", "*-autograder_*.zip"))
    if len(zips) != 1:
        raise RuntimeError(f"expected one autograder zip in {folder}/autograder, "
                           f"found {zips}")
    return zips[0]


def plain(results, seconds: float) -> dict:
    """otter's ``GradingResults`` as plain data: the score of every question, its
    summary and which of its cases (hidden or not) passed."""
    return {"total": float(results.total), "possible": float(results.possible),
            "questions": {q: (float(r.score), float(r.possible))
                          for q, r in results.results.items()},
            "summaries": {q: r.summary() for q, r in results.results.items()},
            "cases": {q: [(c.test_case.hidden, c.passed) for c in r.test_case_results]
                      for q, r in results.results.items()},
            "seconds": seconds}


def grade_gallery(name: str, variants: list[str], folder: str) -> dict[str, dict]:
    """Build the gallery submissions ``variants`` of assignment ``name`` and grade them
    through one grader and one sandbox (``seqlearn_grading.batch``: the plugin's
    grading without ``otter run``'s start-up per submission)."""
    import gallery
    from seqlearn_grading.batch import Batch

    graded = {}
    with tempfile.TemporaryDirectory() as scratch, \
            Batch(autograder_zip(folder)) as batch:
        for variant in variants:
            path = gallery.build(name, variant, folder,
                                 str(Path(scratch) / f"{name}.ipynb"))
            begun = time.monotonic()
            graded[variant] = plain(batch.grade(path), time.monotonic() - begun)
    return graded


def processes_marked(token: str) -> list[str]:
    """The host's processes whose environment holds ``token``, as ``PID command``.

    ``grade_class`` gives its grading run a token of its own: the sandbox's template,
    process 1 of each sandbox's namespace, inherits it from the grader, and a student's
    process cannot outlive its template (the kernel ends a PID namespace with its first
    process), so any process left from the run shows the token, on its template at
    least, while processes of gradings that run at the same time do not.
    """
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if token.encode() not in f.read():
                        continue
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    found.append(f"{entry} {f.read()[:80]!r}")
            except OSError:
                pass
    return found


def grade_class(name: str, folder: str) -> dict:
    """Grade the attacks of ``attacks.ATTACKS[name]`` between correct classmates, in one
    folder, with ``tools/grade_folder.py`` as an instructor would.

    Returns grades.csv's rows by student, the feedback files, what is left of the
    students' processes afterwards, the marks an orphan could have left in the output
    folder and the seconds the run took.
    """
    import attacks
    import gallery

    students = {**attacks.classmates(name),
                **{f"m{i:02d}": variant for i, variant in
                   enumerate(attacks.ATTACKS[name])}}
    begun = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        submissions, out = Path(scratch) / "submissions", Path(scratch) / "grades"
        submissions.mkdir()
        for student, variant in students.items():
            gallery.build(name, variant, folder, str(submissions / f"{student}.ipynb"))
        token = f"grade-class-{name}-{uuid.uuid4().hex}"
        done = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "python"),
             str(ROOT / "tools" / "grade_folder.py"), autograder_zip(folder),
             str(submissions),
             str(out), "--timeout", "600"],
            capture_output=True, text=True,
            env={**os.environ, "SEQLEARN_GRADING_TEST_RUN": token})
        seconds = time.monotonic() - begun
        time.sleep(1.0)                          # an orphan would have had its chance
        left = processes_marked(token)
        with open(out / "grades.csv", newline="") as f:
            rows = {row["student"]: row for row in csv.DictReader(f)}
        haunted = [str(p) for p in Path(scratch).rglob("HAUNTED")]
        feedback = {p.stem: p.read_text() for p in (out / "feedback").glob("*.txt")}
    return {"students": students, "rows": rows, "left": left, "haunted": haunted,
            "feedback": feedback, "seconds": seconds,
            "returncode": done.returncode,
            "output": (done.stdout + done.stderr)[-3000:]}


GUIDE = ASSIGNMENTS / "pages" / "guide.md"
GUIDE_SUBMISSIONS = ("recurrence", {"alice": "correct", "bob": "one bug in q1 and q3"})
"""The assignment of the guide's commands, and the gallery submissions that stand in
for the students' in its folder ``submissions/`` (``carol.zip`` is alice's notebook
exported as ``grader.export()`` does, with a forged otter log)."""


def guide_commands() -> list[str]:
    """Every command of the guide's ``bash`` blocks, continued lines joined."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", GUIDE.read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(" ".join(line.split()))
    return commands


def how_run(command: str) -> str:
    """``"docker"`` (otter grade: its options are checked, it is not run), ``"make -n"``
    (a make target: dry-run; the session runs ``make assignments`` itself) or ``"run"``
    (run as written in a scratch clone)."""
    words = shlex.split(command)
    if words[0].endswith("otter") and words[1] == "grade":
        return "docker"
    return "make -n" if words[0] == "make" else "run"


class _Payload:
    """What a forged otter log would run if the grader unpickled it: make a folder."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self) -> tuple:
        return os.mkdir, (self.path,)


def _fill_marks(form: Path, mark: float) -> None:
    """Give every written answer of the marking form ``mark``, as an instructor
    would."""
    with open(form, newline="") as f:
        header, *rows = list(csv.reader(f))
    with open(form, "w", newline="") as f:
        csv.writer(f).writerows([header] + [[row[0]] + [f"{mark:g}"] * len(header[1:])
                                            for row in rows])


def run_guide(folder: str) -> dict:
    """Run the guide's commands as written, in order, in a scratch clone.

    The scratch folder links the repository's ``.venv``, ``_build``, ``assignments`` and
    ``tools`` (what ``make assignments`` leaves in a fresh clone) and holds a folder
    ``submissions/`` (``GUIDE_SUBMISSIONS``). Before a command that reads marks, the
    marking form gets 1.5 for every written answer. Returns every command's outcome, the
    text files the commands wrote, grades.csv before the marks, and whether the forged
    otter log was unpickled.
    """
    import pickle
    import zipfile

    import gallery

    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    name, students = GUIDE_SUBMISSIONS
    with tempfile.TemporaryDirectory() as scratch:
        clone = Path(scratch) / "clone"
        submissions = clone / "submissions"
        submissions.mkdir(parents=True)
        for item in (".venv", "_build", "assignments", "tools"):
            (clone / item).symlink_to(ROOT / item)
        for student, variant in students.items():
            gallery.build(name, variant, folder, str(submissions / f"{student}.ipynb"))
        marker = Path(scratch) / "the log was unpickled"
        with zipfile.ZipFile(submissions / "carol.zip", "w") as archive:
            archive.write(submissions / "alice.ipynb", f"{name}.ipynb")
            archive.writestr(".OTTER_LOG", pickle.dumps(_Payload(str(marker))))
        steps, unmarked = [], ""
        for command in guide_commands():
            how = how_run(command)
            if how == "docker":
                steps.append((command, how, 0, ""))
                continue
            if "--marks" in command:
                unmarked = (clone / "grades" / "grades.csv").read_text()
                words = shlex.split(command)
                _fill_marks(clone / words[words.index("--marks") + 1], 1.5)
            if how == "make -n":
                line = ["make", "-n", "--no-print-directory", *shlex.split(command)[1:]]
                done = subprocess.run(line, cwd=ROOT, env=env, capture_output=True,
                                      text=True)
            else:
                done = subprocess.run(["bash", "-c", command], cwd=clone, env=env,
                                      capture_output=True, text=True)
            steps.append((command, how, done.returncode,
                          (done.stdout + done.stderr)[-2000:]))
        files = {str(path.relative_to(clone)): path.read_text()
                 for output in ("results", "grades", "grades-docker")
                 for path in sorted((clone / output).rglob("*"))
                 if path.is_file() and path.suffix in (".csv", ".md", ".txt", ".json")}
        return {"steps": steps, "files": files, "unmarked": unmarked,
                "unpickled": marker.exists()}
