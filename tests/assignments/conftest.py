"""Generate every assignment once per session, then run and grade its notebooks in parallel.

``generated`` runs ``make assignments OTTER_ASSIGN=--no-run-tests`` (otter assign for every
master notebook, into ``_build/assignments/NAME/{student,autograder}``); ``runs`` then, in
``WORKERS`` processes, runs each untouched student notebook top to bottom and grades the
solution notebook and the untouched student notebook with ``otter run`` (no Docker).
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import grading
from grading import master_names
from layout import ROOT

BUILD = ROOT / "_build" / "assignments"
WORKERS = 2  # each job is one Jupyter kernel; two keep a 2-core machine busy


@pytest.fixture(scope="session")
def generated() -> dict[str, Path]:
    """``make assignments`` without otter's own test run (the tests below grade instead)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    done = subprocess.run(["make", f"-j{WORKERS}", "--no-print-directory", "assignments",
                           "OTTER_ASSIGN=--no-run-tests"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"make assignments failed:\n{done.stdout[-3000:]}\n" \
                                 f"{done.stderr[-3000:]}"
    return {name: BUILD / name for name in master_names()}


@pytest.fixture(scope="session")
def runs(generated: dict[str, Path]) -> dict[tuple[str, str], dict]:
    """``(name, "student run" | "solution grade" | "student grade")`` -> the job's result."""
    context = multiprocessing.get_context("spawn")  # a clean interpreter per worker
    with ProcessPoolExecutor(WORKERS, mp_context=context) as pool:
        jobs = {}
        for name, folder in generated.items():
            autograder = str(folder / "autograder")
            jobs[name, "student run"] = pool.submit(
                grading.run_like_a_student, str(folder / "student"), name)
            jobs[name, "solution grade"] = pool.submit(
                grading.grade, str(folder / "autograder" / f"{name}.ipynb"), autograder)
            jobs[name, "student grade"] = pool.submit(
                grading.grade, str(folder / "student" / f"{name}.ipynb"), autograder)
        return {key: job.result() for key, job in jobs.items()}
