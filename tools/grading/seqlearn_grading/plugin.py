"""The otter plugin that grades a notebook outside the notebook's reach.

otter runs a submission top to bottom in a Jupyter kernel and then runs the tests in
that same kernel, so a cell can patch the comparison helper, rewrite the test files or
the reference, and a dead or endless kernel leaves no result at all. With this plugin
(listed under ``plugins`` in a master's ``# ASSIGNMENT CONFIG``) otter still runs the
kernel, but on an empty notebook; the plugin then grades in otter's own process, the
grader:

1. Before anything of the student's runs, it reads the tests, the comparison helper
   ``checks.py`` and the configuration from the autograder, imports what the tests
   import, and starts a sandbox template (``seqlearn_grading.sandbox``) in namespaces
   of its own (:mod:`seqlearn_grading.isolation`), with the libraries loaded and the
   references named in ``forbid`` removed.
2. In a thread of its own, which runs while otter's kernel runs (so the kernel's start
   costs no time), for every autograded question a fresh copy of the template runs the
   student's cells up to the end of that question (a cell that runs too long or ends the
   process is left out), binds the model answers of the earlier questions it builds on
   (``use_reference``), and then the question's tests run *in the grader*: they compute
   the reference values themselves, call the student's functions in the copy (with time
   limits) and compare with the grader's private copy of ``checks.py``. A question's
   own ``forbid`` removes more references from its copy only.
3. Written questions get an entry worth their points, at zero until marked by hand, so
   that the totals count them.

Steps 1 to 3 are :class:`seqlearn_grading.grader.Grading`, which this plugin makes once
per submission; :mod:`seqlearn_grading.batch` grades many notebooks through one.

Configuration (all optional)::

    plugins:
      - seqlearn_grading.SafeGrading:
          forbid: [seqlearn.bptt.rnn_forward, ...]  # references answers may not call
          time_limit: 60        # seconds for all calls of one question's tests
          call_time_limit: 20   # seconds for one call of a student's function
          cell_time_limit: 60   # seconds for one notebook cell
          seed: null            # fixed seed for the hidden tests (null: fresh each run)
          unisolated: false     # true: grade where no namespaces exist (trusted work)
          questions:
            q5: {use_reference: [elman_forward], time_limit: 120, call_time_limit: 90}
            q2: {forbid: [torch.autograd.grad]}   # removed for this question only

``otter assign`` adds the model answers that ``use_reference`` names, the modules to
preload and the written questions' points (``during_generate``).
"""

from __future__ import annotations

import copy
import glob
import os
import pathlib
import shutil
import tempfile
import threading
import time
from typing import Any

import nbformat
import yaml
from otter.plugins import AbstractOtterPlugin

from seqlearn_grading.grader import BASE_PRELOAD, PLUGIN, Graded, Grading
from seqlearn_grading.notebook import imported_modules, model_answers

def written_questions(master: pathlib.Path) -> dict[str, float]:
    """``{question: points}`` of the ``manual: true`` questions of a master notebook."""
    nb = nbformat.read(master, as_version=4)
    found = {}
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.startswith("# BEGIN QUESTION"):
            config = yaml.safe_load(cell.source.split("\n", 1)[1]) or {}
            if config.get("manual"):
                points = config.get("points", 0)
                found[config["name"]] = float(sum(points) if isinstance(points, list)
                                              else points)
    return found


class SafeGrading(AbstractOtterPlugin):
    """Grades every question in a sandbox, compares in the grader (module docstring)."""

    grading_model_answers = False
    """True in the ``otter assign`` process, which grades only the solutions notebook:
    there the written questions earn their points with their model answers."""

    # ------------------------------------------------------------------ otter assign

    def during_generate(self, otter_config: dict, assignment: Any) -> None:
        if assignment is None:
            return
        SafeGrading.grading_model_answers = True
        config = None
        for entry in otter_config.get("plugins", []):
            if isinstance(entry, dict) and PLUGIN in entry:
                if entry[PLUGIN] is None:
                    entry[PLUGIN] = {}
                config = entry[PLUGIN]
        if config is None:
            return
        master = pathlib.Path(assignment.master)
        solutions = pathlib.Path(assignment.ag_notebook_path)
        if not solutions.is_absolute():
            solutions = master.parent / solutions
        nb = nbformat.read(solutions, as_version=4)
        imports, definitions = model_answers(nb)
        wanted = {name for q in (config.get("questions") or {}).values()
                  for name in (q or {}).get("use_reference", [])}
        missing = sorted(wanted - set(definitions))
        if missing:
            raise ValueError(f"use_reference names {missing}, which no solution "
                             "defines")
        config["reference_imports"] = imports
        config["references"] = {name: definitions[name] for name in sorted(wanted)}
        modules = [m for cell in nb.cells if cell.cell_type == "code"
                   for m in imported_modules(cell.source)]
        config["preload"] = sorted(set(BASE_PRELOAD + modules))
        config["written"] = written_questions(master)

    # ------------------------------------------------------------------ otter run /
    # grade

    def before_grading(self, config: Any) -> None:
        """The student's otter log is their own pickle: never read it."""
        if os.path.isfile(".OTTER_LOG"):
            os.remove(".OTTER_LOG")

    def before_execution(self, submission: Any) -> Any:
        """Read everything the grading needs, start the sandbox, and give otter an empty
        notebook to run."""
        self.begun = time.monotonic()
        source = pathlib.Path("..", "source").resolve()
        tests = {pathlib.Path(path).stem: pathlib.Path(path).read_text()
                 for path in sorted(glob.glob(str(source / "tests" / "*.py")))}
        shutil.rmtree("tests", ignore_errors=True)            # otter's kernel runs none
        # The hidden tests and the model answers are in memory now: the student's code,
        # which runs later, finds them on disk no more (in Docker, nowhere else either).
        shutil.rmtree(source / "tests", ignore_errors=True)
        (source / "otter_config.json").unlink(missing_ok=True)
        self.workdir = tempfile.mkdtemp(prefix="sandbox-")
        for item in pathlib.Path(".").iterdir():
            if item.name in ("tests", "__init__.py", "__pycache__") or \
                    item.suffix == ".ipynb":
                continue
            target = pathlib.Path(self.workdir, item.name)
            if item.is_dir():
                shutil.copytree(item, target, symlinks=True)
            elif item.is_file():
                shutil.copy(item, target)
        self.grading = Grading(self.plugin_config or {}, tests,
                               source / "files" / "checks.py", self.workdir)
        self.report: list[str] = []
        self._graded: Graded | BaseException | None = None
        self._grading = threading.Thread(target=self._grade_in_background,
                                         args=(submission,), name="seqlearn-grading",
                                         daemon=True)
        self._grading.start()          # alongside otter's kernel and its empty notebook
        metadata = {} if isinstance(submission, str) else \
            submission.get("metadata", {})
        return nbformat.v4.new_notebook(metadata=copy.deepcopy(metadata))

    def _grade_in_background(self, submission: Any) -> None:
        try:
            self._graded = self.grading.grade(submission,
                                              model=SafeGrading.grading_model_answers)
        except BaseException as error:                 # raised again in after_grading
            self._graded = error

    def after_grading(self, results: Any) -> None:
        """Wait for the grading, which started when otter's kernel did, and put its
        results in place of the empty kernel's."""
        self.report.append(f"otter's kernel done after "
                           f"{time.monotonic() - self.begun:.1f} s")
        try:
            self._grading.join()
        finally:
            self.grading.close()
            shutil.rmtree(self.workdir, ignore_errors=True)
        if isinstance(self._graded, BaseException):
            raise self._graded
        graded = self._graded
        self.report.extend(graded.report)
        results.results = {tf.name: tf for tf in graded.test_files}
        results._catastrophic_error = None
        if self.grading.template.mode is None:           # loudly, where it is read
            self.report.insert(0, self.grading.template.isolation())
        results.set_output(self.grading.output(graded))

    def generate_report(self) -> str:
        return "\n".join(getattr(self, "report", []))
