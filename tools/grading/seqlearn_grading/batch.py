"""Many notebooks of one assignment graded through one grader and one sandbox.

``otter run`` grades one submission per call: it unpacks the autograder, starts a
Jupyter kernel for the plugin's empty notebook, and the plugin starts a sandbox
template and imports what the tests import (seconds each, on every call). A
:class:`Batch` does all of that once and then grades every notebook given to it as the
plugin does inside ``otter run`` (the same :class:`~seqlearn_grading.grader.Grading`,
a fresh hidden-test seed per notebook), so its results are ``otter run``'s::

    with Batch("hw-autograder_2026.zip") as batch:
        for path in notebooks:
            results = batch.grade(path)     # otter's GradingResults

What it leaves out is ``otter run``'s own work around the plugin: the check of the
notebook's assignment name, the PDF, ``results.json``. The questions of every notebook
are copies forked from the one template, as the questions of one submission are under
``otter run``; each copy starts from the template's clean state, with its own ``/tmp``
and working folder, and everything a copy started ends with its question.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import tempfile
import time
import zipfile
from typing import Any

import nbformat
from otter.test_files import GradingResults

from seqlearn_grading.grader import PLUGIN, Grading


class Batch:
    """The grader and the sandbox of the autograder zip ``autograder`` (module
    docstring)."""

    def __init__(self, autograder: str | pathlib.Path):
        self.scratch = pathlib.Path(tempfile.mkdtemp(prefix="seqlearn-batch-"))
        try:
            source = self.scratch / "source"
            with zipfile.ZipFile(autograder) as archive:
                archive.extractall(source)
            config = json.loads((source / "otter_config.json").read_text())
            settings = [entry[PLUGIN] or {} for entry in config.get("plugins", [])
                        if isinstance(entry, dict) and PLUGIN in entry]
            if not settings:
                raise ValueError(f"{autograder} does not grade with {PLUGIN}")
            tests = {path.stem: path.read_text()
                     for path in sorted((source / "tests").glob("*.py"))}
            workdir = self.scratch / "submission"         # otter's prepare_files
            shutil.copytree(source / "files", workdir)
            self.grading = Grading(settings[0], tests, source / "files" / "checks.py",
                                   str(workdir))
        except BaseException:
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        self.report: list[str] = []

    def grade(self, notebook: str | pathlib.Path) -> Any:
        """otter's ``GradingResults`` of the notebook at ``notebook``; the grader's
        report of it is ``self.report``."""
        begun = time.monotonic()
        graded = self.grading.grade(nbformat.read(notebook, as_version=4))
        results = GradingResults(graded.test_files)
        results.set_output(self.grading.output(graded))
        self.report = graded.report + [f"{time.monotonic() - begun:.1f} s in all"]
        return results

    def close(self) -> None:
        try:
            self.grading.close()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> "Batch":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
