"""What the assignment tests share: the masters' names, a student's run and otter's grading.

Each job imports otter and starts a Jupyter kernel, which takes seconds, so the fixture in
``conftest.py`` runs the jobs in a pool of worker processes and keeps only plain results
(numbers and strings) for the tests to look at.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from pathlib import Path

ASSIGNMENTS = Path(__file__).resolve().parents[2] / "assignments"


def master_names() -> list[str]:
    """The assignments, named after their master notebooks in assignments/."""
    return sorted(p.stem for p in ASSIGNMENTS.glob("*.ipynb"))


def run_like_a_student(student_dir: str, name: str) -> dict:
    """Run the untouched student notebook top to bottom, as a student would, in a scratch copy.

    Returns the errors of the run (cell source, exception name and message) and the text that
    every ``grader.check`` cell printed.
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


def grade(submission: str, autograder_dir: str) -> dict:
    """Grade one notebook with ``otter run`` (no Docker): the score of every question."""
    import otter.run

    zips = glob.glob(os.path.join(autograder_dir, "*-autograder_*.zip"))
    if len(zips) != 1:
        raise RuntimeError(f"expected one autograder zip in {autograder_dir}, found {zips}")
    with tempfile.TemporaryDirectory() as out:
        results = otter.run.main(submission, autograder=zips[0], output_dir=out, no_logo=True)
    return {"total": float(results.total), "possible": float(results.possible),
            "questions": {q: (float(r.score), float(r.possible))
                          for q, r in results.results.items()}}
