"""Generate every assignment once per session, then run and grade notebooks in parallel.

``generated`` runs ``make assignments OTTER_ASSIGN=--no-run-tests`` (otter assign for
every master notebook, into ``_build/assignments/NAME/{student,autograder}``); ``runs``
then, in ``WORKERS`` processes, runs each untouched student notebook top to bottom,
grades every submission of the gallery (``gallery.py``) through one grader and sandbox
per assignment (``grading.grade_gallery``), grades the attacks between classmates
with ``tools/grade_folder.py``, which runs ``otter run`` per student
(``grading.grade_class``), and runs the guide's commands as written
(``grading.run_guide``). The session ends with a table of the gallery: every
submission's score, the score it deserves, and the seconds its grading took.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import attacks
import gallery
import grading
from grading import master_names
from layout import ROOT

BUILD = ROOT / "_build" / "assignments"
WORKERS = 2  # each job is one Jupyter kernel and one sandbox; two keep 2 cores busy
FINISHED: dict[tuple[str, str], dict] = {}
"""What ``runs`` returned, for the summary at the end of the session."""


@pytest.fixture(scope="session")
def generated() -> dict[str, Path]:
    """``make assignments`` without otter's own test run (the tests below grade
    instead)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    done = subprocess.run(["make", f"-j{WORKERS}", "--no-print-directory",
                           "assignments", "OTTER_ASSIGN=--no-run-tests"], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"make assignments failed:\n{done.stdout[-3000:]}\n" \
                                 f"{done.stderr[-3000:]}"
    return {name: BUILD / name for name in master_names()}


@pytest.fixture(scope="session")
def runs(generated: dict[str, Path]) -> dict[tuple[str, str], dict]:
    """``(name, "student run" | gallery variant | "class" | "guide")`` -> the job's
    result.

    The slowest jobs (the guide and the classes, then the galleries) are submitted
    first so that the two workers finish together.
    """
    context = multiprocessing.get_context("spawn")  # a clean interpreter per worker
    jobs = {}
    with ProcessPoolExecutor(WORKERS, mp_context=context,
                             initializer=grading.quiet) as pool:
        name = grading.GUIDE_SUBMISSIONS[0]
        jobs[name, "guide"] = pool.submit(grading.run_guide, str(generated[name]))
        for name in attacks.ATTACKS:
            jobs[name, "class"] = pool.submit(grading.grade_class, name,
                                              str(generated[name]))
        for name, folder in generated.items():
            jobs[name, "gallery"] = pool.submit(
                grading.grade_gallery, name, list(gallery.GALLERY[name]), str(folder))
        for name, folder in generated.items():
            jobs[name, "student run"] = pool.submit(
                grading.run_like_a_student, str(folder / "student"), name)
        for key, job in jobs.items():
            if key[1] == "gallery":
                FINISHED.update({(key[0], variant): graded
                                 for variant, graded in job.result().items()})
            else:
                FINISHED[key] = job.result()
    return dict(FINISHED)


def pytest_terminal_summary(terminalreporter) -> None:
    """The gallery's table: got and deserved totals, and otter run's time, per
    submission."""
    from test_assignments import questions

    rows = [(name, variant, FINISHED[name, variant])
            for name, table in gallery.GALLERY.items() for variant in table
            if (name, variant) in FINISHED]
    if not rows:
        return
    terminalreporter.section("gallery: score (deserved) and grading time")
    for name, variant, grades in rows:
        found = questions(name)
        points = {q["name"]: q["total"] for q in found}
        written = {q["name"] for q in found if q.get("manual")}
        deserved = gallery.expected_scores(gallery.GALLERY[name][variant], points,
                                           written)
        terminalreporter.write_line(
            f"{name:>16} | {variant:<30} | {grades['total']:4g} of "
            f"{grades['possible']:g} ({sum(deserved.values()):g}) | "
            f"{grades['seconds']:5.1f} s")
    classes = [(name, FINISHED[name, "class"]) for name in attacks.ATTACKS
               if (name, "class") in FINISHED]
    if classes:
        terminalreporter.section("attacks graded with classmates by grade_folder.py: "
                                 "autograded points (deserved)")
    for name, graded in classes:
        found = questions(name)
        points = {q["name"]: q["total"] for q in found}
        written = {q["name"] for q in found if q.get("manual")}
        for student, variant in graded["students"].items():
            row = graded["rows"].get(student, {})
            deserved = gallery.expected_scores(gallery.find(name, variant), points,
                                               written)
            terminalreporter.write_line(
                f"{name:>12} | {student:<5} | {variant:<42} | "
                f"{row.get('autograded', '?'):>4} ({sum(deserved.values()):g}) | "
                f"{float(row.get('seconds') or 0):5.1f} s")
        terminalreporter.write_line(f"{name:>12} | the whole folder: "
                                    f"{graded['seconds']:.0f} s; alive afterwards: "
                                    f"{len(graded['left'])}")
