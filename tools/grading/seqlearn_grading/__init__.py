"""Grading the book's otter-grader assignments out of the student notebook's reach.

``SafeGrading`` is the otter plugin (:mod:`seqlearn_grading.plugin`); the sandboxes that
run a student's code are :mod:`seqlearn_grading.sandbox` (their side) and
:mod:`seqlearn_grading.session` (the grader's side), walled off from the grader by
:mod:`seqlearn_grading.isolation`; :mod:`seqlearn_grading.wire`
carries values between them; :mod:`seqlearn_grading.notebook` reads the notebooks.
``tools/grade_folder.py`` grades a folder of submissions with ``otter run``.
"""

from seqlearn_grading.plugin import SafeGrading

__all__ = ["SafeGrading"]
