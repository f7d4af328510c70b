"""The grader's side of an assignment: its tests, its comparison helper and its sandbox.

:class:`Grading` reads what grading needs once (the plugin's configuration, the tests'
sources, ``checks.py``) and starts the sandbox template; :meth:`Grading.grade` then
grades one submission: for every autograded question a fresh copy of the template runs
the student's cells, the question's tests run here, in the grader, and written questions
get an entry worth their points. The otter plugin (:mod:`seqlearn_grading.plugin`) makes
one ``Grading`` per ``otter run``; :mod:`seqlearn_grading.batch` grades many notebooks
through one.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import os
import pathlib
import re
import secrets
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import nbformat
from otter.test_files import ExceptionTestFile, TestCase, TestCaseResult

from seqlearn_grading.notebook import imported_modules, read_student_notebook
from seqlearn_grading.session import (AutograderProblem, Environment, Limits,
                                      ProcessEnded, Question, Template)

PLUGIN = "seqlearn_grading.SafeGrading"
"""The plugin's name in otter's configuration (``plugins``)."""
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


def question_number(name: str) -> int:
    found = re.fullmatch(r"q(\d+)", name)
    return int(found.group(1)) if found else 10 ** 6


def written_result(name: str, points: float, model: bool) -> Any:
    """A written question's entry: worth its points, passed only for the model answer
    (``model``); otherwise 0 until the instructor marks it."""
    case = TestCase(name=f"{name} (written)", body="graded by hand", hidden=False,
                    points=points, success_message=None, failure_message=None)
    test_file = ExceptionTestFile(name, f"written/{name}", [case], all_or_nothing=False)
    test_file.test_case_results = [TestCaseResult(
        test_case=case, passed=model,
        message="The model answer." if model else
        "Written answer: graded by hand, 0 until the instructor marks it.")]
    return test_file


@dataclass
class Graded:
    """One submission's grading: otter's test files (every question, sorted), the
    hidden tests' seed and the lines of the grader's report."""

    test_files: list[Any]
    seed: int
    report: list[str] = field(default_factory=list)


class Grading:
    """One assignment's grading (module docstring).

    ``cfg`` is the plugin's configuration, ``tests`` maps each question to its test
    file's source, ``checks`` is the path of the comparison helper and ``workdir`` the
    folder of the submission's files (the handout's, without the notebook), which every
    copy starts in. The template starts at once, while this process imports what the
    tests import.
    """

    def __init__(self, cfg: dict, tests: dict[str, str], checks: pathlib.Path,
                 workdir: str):
        self.begun = time.monotonic()
        self.cfg, self.tests, self.checks = cfg, tests, checks
        forbid = list(cfg.get("forbid") or [])
        preload = list(cfg.get("preload") or BASE_PRELOAD)
        # In otter's grading container (/autograder), where namespaces are usually
        # forbidden, the container itself is the wall between students.
        unisolated = bool(cfg.get("unisolated")) or os.path.isdir("/autograder/source")
        self._template_args = (workdir, preload, forbid)
        self._template_kwargs = {"unisolated": unisolated}
        # It starts while we import; it refuses on a machine without namespaces.
        self.template = Template(*self._template_args, **self._template_kwargs)
        with checks_module(load_checks(checks)):
            for text in tests.values():
                for name in imported_modules(text):
                    try:
                        importlib.import_module(name)
                    except Exception:
                        pass

    def _template_now(self) -> Template:
        if not self.template.alive():
            self.template.close()
            self.template = Template(*self._template_args, **self._template_kwargs)
        return self.template

    def _limits(self, question: str) -> Limits:
        own = (self.cfg.get("questions") or {}).get(question) or {}
        base = Limits()

        def setting(key: str, default: float) -> float:
            return float(own.get(key, self.cfg.get(key, default)))

        return Limits(question=setting("time_limit", base.question),
                      call=setting("call_time_limit", base.call),
                      cell=setting("cell_time_limit", base.cell))

    def grade(self, submission: Any, model: bool = False) -> Graded:
        """Grade one submission (a notebook, or a ``.py`` file's text) with a fresh
        seed for the hidden tests (the configuration's ``seed``, if it fixes one);
        ``model``: written questions earn their points (the solutions notebook)."""
        begun = time.monotonic()
        seed = self.cfg.get("seed")
        if seed is None:
            seed = secrets.randbits(64)
        if isinstance(submission, str):                       # a .py submission
            submission = nbformat.v4.new_notebook(
                cells=[nbformat.v4.new_code_cell(submission)])
        notebook = read_student_notebook(copy.deepcopy(submission))
        report: list[str] = []
        suspicious = sorted({f"cell {cell.index}" for cell in notebook.cells
                             if SUSPICIOUS.search(cell.source)})
        if suspicious:
            report.append("Note: the submission's code names torch.ops, torch._C or "
                          f"ctypes ({', '.join(suspicious)}): forbidden operators stay "
                          "reachable that way; read it yourself")
        graded = []
        bad_cells: dict[int, str] = {}
        with checks_module(load_checks(self.checks, seed)):
            self.template.wait_ready()
            report.append(f"sandbox ready after {time.monotonic() - self.begun:.1f} s; "
                          f"{self.template.isolation()}")
            for name in sorted(self.tests, key=question_number):
                graded.append(self._grade_one(notebook, name, bad_cells, report))
        for name, points in (self.cfg.get("written") or {}).items():
            graded.append(written_result(name, float(points), model))
        graded.sort(key=lambda tf: question_number(tf.name))
        report.append(f"graded in {time.monotonic() - begun:.1f} s "
                      f"(hidden-test seed {seed})")
        return Graded(graded, seed, report)

    def output(self, graded: Graded) -> str:
        """The results' output: the seed, after a loud line where nothing isolated the
        student's code."""
        output = f"Hidden tests drew their inputs with seed {graded.seed}."
        if self.template.mode is None:
            output = f"{self.template.isolation()}.\n{output}"
        return output

    def _grade_one(self, notebook: Any, name: str, bad_cells: dict[int, str],
                   report: list[str]) -> Any:
        begun = time.monotonic()
        test_file = ExceptionTestFile.from_string(self.tests[name],
                                                  path=f"tests/{name}.py")
        own = (self.cfg.get("questions") or {}).get(name) or {}
        references = {n: self.cfg["references"][n]
                      for n in own.get("use_reference", [])}
        question = Question(self._template_now, name, notebook.cells_for(name),
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
        report.append(f"{name}: {test_file.score:g} of {test_file.possible:g} in "
                      f"{time.monotonic() - begun:.1f} s"
                      + (f" ({'; '.join(question.left_out())})"
                         if question.left_out() else ""))
        return test_file

    def close(self) -> None:
        self.template.close()
