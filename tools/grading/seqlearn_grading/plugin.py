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

import contextlib
import copy
import glob
import importlib
import importlib.util
import os
import pathlib
import re
import secrets
import shutil
import sys
import tempfile
import threading
import time
from typing import Any, Iterator

import nbformat
import yaml
from otter.plugins import AbstractOtterPlugin
from otter.test_files import ExceptionTestFile, TestCase, TestCaseResult

from seqlearn_grading.notebook import (imported_modules, model_answers,
                                       read_student_notebook)
from seqlearn_grading.session import (AutograderProblem, Environment, Limits,
                                      ProcessEnded, Question, Template)

PLUGIN = "seqlearn_grading.SafeGrading"
SUSPICIOUS = re.compile(r"\btorch\s*\.\s*(?:ops|_C)\b|\bctypes\b|_execution_engine")
"""What reaches torch's compiled operators or C code past the removed references."""
BASE_PRELOAD = ["numpy", "torch", "seqlearn"]
"""Loaded by every sandbox template; the modules that the master notebook imports come
too."""


def load_checks(path: pathlib.Path, seed: int | None = None) -> Any:
    """A private copy of the comparison helper ``checks.py`` at ``path``, its
    ``GRADING_SEED`` set to ``seed``."""
    spec = importlib.util.spec_from_file_location("checks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.GRADING_SEED = seed
    return module


@contextlib.contextmanager
def checks_module(module: Any) -> Iterator[Any]:
    """``import checks`` gives ``module`` inside the ``with`` block (the tests import
    their comparison helper by that name)."""
    saved = sys.modules.get("checks")
    sys.modules["checks"] = module
    try:
        yield module
    finally:
        if saved is None:
            sys.modules.pop("checks", None)
        else:
            sys.modules["checks"] = saved


def _question_number(name: str) -> int:
    found = re.fullmatch(r"q(\d+)", name)
    return int(found.group(1)) if found else 10 ** 6


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
        self.cfg = self.plugin_config or {}
        source = pathlib.Path("..", "source").resolve()
        self.tests = {}
        for path in sorted(glob.glob(str(source / "tests" / "*.py"))):
            text = pathlib.Path(path).read_text()
            self.tests[pathlib.Path(path).stem] = text
        self.seed = self.cfg.get("seed")
        if self.seed is None:
            self.seed = secrets.randbits(64)
        self.checks = load_checks(source / "files" / "checks.py", self.seed)
        if isinstance(submission, str):                       # a .py submission
            submission = nbformat.v4.new_notebook(
                cells=[nbformat.v4.new_code_cell(submission)])
        self.notebook = read_student_notebook(copy.deepcopy(submission))
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
        forbid = list(self.cfg.get("forbid") or [])
        preload = list(self.cfg.get("preload") or BASE_PRELOAD)
        # In otter's grading container (/autograder), where namespaces are usually
        # forbidden, the container itself is the wall between students.
        unisolated = bool(self.cfg.get("unisolated")) or \
            os.path.isdir("/autograder/source")
        self._template_args = (self.workdir, preload, forbid)
        self._template_kwargs = {"unisolated": unisolated}
        # It starts while we import; it refuses on a machine without namespaces.
        self._template = Template(*self._template_args, **self._template_kwargs)
        self._import_what_tests_import()
        self.report: list[str] = []
        suspicious = sorted({f"cell {cell.index}" for cell in self.notebook.cells
                             if SUSPICIOUS.search(cell.source)})
        if suspicious:
            self.report.append("Note: the submission's code names torch.ops, torch._C "
                               f"or ctypes ({', '.join(suspicious)}): forbidden "
                               "operators stay reachable that way; read it yourself")
        self._graded: list[Any] | BaseException = []
        self._grading = threading.Thread(target=self._grade_in_background,
                                         name="seqlearn-grading", daemon=True)
        self._grading.start()          # alongside otter's kernel and its empty notebook
        metadata = copy.deepcopy(submission.get("metadata", {}))
        return nbformat.v4.new_notebook(metadata=metadata)

    def _import_what_tests_import(self) -> None:
        with checks_module(self.checks):
            for text in self.tests.values():
                for name in imported_modules(text):
                    try:
                        importlib.import_module(name)
                    except Exception:
                        pass

    def _template_now(self) -> Template:
        if not self._template.alive():
            self._template.close()
            self._template = Template(*self._template_args, **self._template_kwargs)
        return self._template

    def _limits(self, question: str) -> Limits:
        own = (self.cfg.get("questions") or {}).get(question) or {}
        base = Limits()

        def setting(key: str, default: float) -> float:
            return float(own.get(key, self.cfg.get(key, default)))

        return Limits(question=setting("time_limit", base.question),
                      call=setting("call_time_limit", base.call),
                      cell=setting("cell_time_limit", base.cell))

    def _grade_in_background(self) -> None:
        try:
            self._graded = self._grade_all()
        except BaseException as error:                 # raised again in after_grading
            self._graded = error

    def after_grading(self, results: Any) -> None:
        """Wait for the grading, which started when otter's kernel did, and put its
        results in place of the empty kernel's."""
        self.report.insert(0, f"otter's kernel done after "
                              f"{time.monotonic() - self.begun:.1f} s")
        try:
            self._grading.join()
        finally:
            self._template.close()
            shutil.rmtree(self.workdir, ignore_errors=True)
        if isinstance(self._graded, BaseException):
            raise self._graded
        graded = self._graded
        results.results = {tf.name: tf for tf in graded}
        results._catastrophic_error = None
        output = f"Hidden tests drew their inputs with seed {self.seed}."
        if self._template.mode is None:                   # loudly, where it is read
            output = f"{self._template.isolation()}.\n{output}"
            self.report.insert(0, self._template.isolation())
        results.set_output(output)

    def _grade_all(self) -> list[Any]:
        graded = []
        bad_cells: dict[int, str] = {}
        with checks_module(self.checks):
            self._template.wait_ready()
            self.report.append(f"sandbox ready after "
                               f"{time.monotonic() - self.begun:.1f} s; "
                               f"{self._template.isolation()}")
            for name in sorted(self.tests, key=_question_number):
                graded.append(self._grade_one(name, bad_cells))
        for name, points in (self.cfg.get("written") or {}).items():
            graded.append(self._written(name, float(points)))
        graded.sort(key=lambda tf: _question_number(tf.name))
        self.report.append(f"graded in {time.monotonic() - self.begun:.1f} s "
                           f"(hidden-test seed {self.seed})")
        return graded

    def _grade_one(self, name: str, bad_cells: dict[int, str]) -> Any:
        begun = time.monotonic()
        test_file = ExceptionTestFile.from_string(self.tests[name],
                                                  path=f"tests/{name}.py")
        own = (self.cfg.get("questions") or {}).get(name) or {}
        references = {n: self.cfg["references"][n]
                      for n in own.get("use_reference", [])}
        question = Question(self._template_now, name, self.notebook.cells_for(name),
                            self._limits(name), bad_cells,
                            imports=list(self.cfg.get("reference_imports") or []),
                            references=references,
                            forbid=list(own.get("forbid") or []))
        try:
            question.start()
            test_file.run(Environment(question))
        except Exception as problem:         # one submission never stops the grading
            if not isinstance(problem, (AutograderProblem, ProcessEnded)):
                problem = f"the grader failed on this question ({problem!r})"
            test_file.test_case_results = [
                TestCaseResult(test_case=tc, passed=False,
                               message=f"❌ Not graded: {problem}")
                for tc in test_file.test_cases]
        finally:
            question.close()
        notes = question.notes + question.left_out()
        if notes:
            for result in test_file.test_case_results:
                if not result.passed:
                    result.message += "\n" + "\n".join(f"Note: {n}" for n in notes[:5])
        self.report.append(f"{name}: {test_file.score:g} of {test_file.possible:g} in "
                           f"{time.monotonic() - begun:.1f} s"
                           + (f" ({'; '.join(question.left_out())})"
                              if question.left_out() else ""))
        return test_file

    @staticmethod
    def _written(name: str, points: float) -> Any:
        case = TestCase(name=f"{name} (written)", body="graded by hand", hidden=False,
                        points=points, success_message=None, failure_message=None)
        test_file = ExceptionTestFile(name, f"written/{name}", [case],
                                      all_or_nothing=False)
        model = SafeGrading.grading_model_answers
        test_file.test_case_results = [TestCaseResult(
            test_case=case, passed=model,
            message="The model answer." if model else
            "Written answer: graded by hand, 0 until the instructor marks it.")]
        return test_file

    def generate_report(self) -> str:
        return "\n".join(getattr(self, "report", []))
