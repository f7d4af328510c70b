"""tools/grading: the sandbox that runs a student's code, the wire that brings values
back.

The wire never unpickles what a sandbox sends and rebuilds plain data only. A question's
copy of the student's process leaves out a cell that runs too long or ends the process
(once, for every later question too), stops a function that does not return, reports one
that ends the process, and makes the forbidden references raise while a graded function
runs.
"""

from __future__ import annotations

import pickle
import tempfile

import numpy as np
import pytest
import sympy
import torch

from seqlearn_grading import wire
from seqlearn_grading.notebook import read_student_notebook, written_answers
from seqlearn_grading.session import (Limits, ProcessEnded, Question, Template,
                                      TimeLimitExceeded)


def test_values_cross_the_wire_as_plain_data():
    x, m = sympy.Symbol("m", real=True), sympy.Symbol("d", positive=True, integer=True)
    value = {"y": np.arange(6.0).reshape(2, 3), "t": torch.ones(2, dtype=torch.float32),
             "pair": (1, 2.5, None, "text", True), 3: [np.float32(1.5), 2 ** 70],
             "expr": x ** 2 * m / 3 + sympy.sqrt(m) + sympy.pi}
    back = wire.decode(wire.encode(value))
    assert np.array_equal(back["y"], value["y"]) and back["y"].dtype == np.float64
    assert torch.equal(back["t"], value["t"]) and back["t"].dtype == torch.float32
    assert back["pair"] == value["pair"] and back[3][1] == 2 ** 70
    assert back[3][0] == np.float32(1.5) and back[3][0].dtype == np.float32
    assert sympy.simplify(back["expr"] - value["expr"]) == 0
    assert isinstance(wire.decode(wire.encode(torch.nn.Linear(2, 2))), wire.Unreadable)
    assert isinstance(wire.decode(wire.encode(np.array([object()]))), wire.Unreadable)


def test_the_wire_refuses_what_it_did_not_write():
    class Boom:
        def __reduce__(self):
            return (print, ("unpickled!",))

    header = b'{"tree": {"$a": ["O", [1], 0]}, "blobs": [8]}'
    objects = len(header).to_bytes(4, "big") + header + bytes(8)
    for payload in (pickle.dumps(Boom()), b"\x00\x00\x00\x05{}}}}",
                    wire.encode(1)[:-1] + b"x", objects):
        with pytest.raises(wire.WireError):
            wire.decode(payload)


def test_notebook_regions_and_written_answers():
    nb = {"cells": [
        {"cell_type": "code", "source": "# Initialize Otter\nimport otter\n"
                                        "grader = otter.Notebook('a.ipynb')"},
        {"cell_type": "code", "source": "import numpy as np"},
        {"cell_type": "markdown", "source": "**Question 1 — one.** Write f."},
        {"cell_type": "code", "source": "def f(): return 1"},
        {"cell_type": "code", "source": 'grader.check("q1")'},
        {"cell_type": "code", "source": "plot()"},
        {"cell_type": "markdown",
         "source": "<!-- BEGIN QUESTION -->\n\n**Question 2 — why (written).** "
                   "Explain."},
        {"cell_type": "markdown", "source": "Because."},
        {"cell_type": "markdown", "source": "<!-- END QUESTION -->\n\n## What follows"},
        {"cell_type": "markdown", "source": "**Question 3 — three.** Write g."},
        {"cell_type": "code", "source": "def g(): return f()\ngrader.check('q3')"},
    ]}
    notebook = read_student_notebook(nb)
    assert [(c.index, c.question) for c in notebook.cells] == [
        (1, None), (3, "q1"), (5, None), (10, "q3")]
    assert [c.index for c in notebook.cells_for("q1")] == [1, 3]
    assert [c.index for c in notebook.cells_for("q3")] == [1, 3, 5, 10]
    assert notebook.cells[-1].source == "def g(): return f()"
    assert written_answers(nb) == [("q2", "**Question 2 — why (written).** Explain.",
                                    "Because.")]


@pytest.fixture(scope="module")
def template():
    with tempfile.TemporaryDirectory() as workdir:
        made = Template(workdir, ["numpy", "seqlearn.bptt"],
                        ["seqlearn.bptt.rnn_forward"])
        yield made
        made.close()


def cells(*sources, question="q1"):
    from seqlearn_grading.notebook import Cell

    return [Cell(i, s, question) for i, s in enumerate(sources)]


def test_bad_cells_are_left_out_once_and_good_ones_still_run(template):
    notebook = cells("x = 1", "while True:\n    pass", "import os\nos._exit(7)",
                     "def f(a):\n    return a + x", "raise ValueError('oops')")
    bad: dict[int, str] = {}
    first = Question(lambda: template, "q1", notebook, Limits(cell=3.0), bad)
    assert first.call("f", (np.ones(2),), {}).tolist() == [2.0, 2.0]
    first.close()
    assert bad == {1: "it ran longer than 3 s",
                   2: "it ended the Python process (exit code 7)"}
    assert any("cell 4 raised ValueError: oops" in n for n in first.notes)
    second = Question(lambda: template, "q2", notebook, Limits(cell=3.0), bad)
    assert second.value("f") is not None and second.value("missing") is None
    assert len(second.left_out()) == 2
    second.close()


def test_a_function_that_hangs_or_ends_the_process_costs_its_question(template):
    notebook = cells("import sys, os", "def loop():\n    while True:\n        pass",
                     "def leave():\n    sys.exit(3)", "def die():\n    os._exit(4)",
                     "def ok():\n    return 5")
    limits = Limits(call=2.0, question=10.0)
    question = Question(lambda: template, "q1", notebook, limits, {})
    with pytest.raises(TimeLimitExceeded, match="did not return within 2 s"):
        question.call("loop", (), {})
    with pytest.raises(TimeLimitExceeded, match="ran out of time in an earlier test"):
        question.call("ok", (), {})
    question.close()
    other = Question(lambda: template, "q2", notebook, Limits(), {})
    exit_message = r"in leave: 3 \(line 2 of cell 2: sys.exit\(3\)\)$"
    with pytest.raises(Exception, match=exit_message) as info:
        other.call("leave", (), {})
    assert type(info.value).__name__ == "SystemExit"
    with pytest.raises(ProcessEnded, match="exit code 4"):
        other.call("die", (), {})
    assert other.call("ok", (), {}) == 5         # a fresh copy, the cells run again
    other.close()


def test_forbidden_references_raise_only_while_a_graded_function_runs(template):
    notebook = cells("import numpy as np\n"
                     "from seqlearn.bptt import init_params, rnn_forward",
                     "params = init_params(1, 2, 1, np.random.default_rng(0))\n"
                     "y, _ = rnn_forward(np.zeros((1, 2, 1)), np.zeros((1, 2)), "
                     "params)",
                     "def cheat():\n    return rnn_forward(np.zeros((1, 2, 1)), "
                     "np.zeros((1, 2)), params)[0]",
                     "def fine():\n    return y")
    question = Question(lambda: template, "q1", notebook, Limits(), {})
    assert question.call("fine", (), {}).shape == (1, 2, 1)     # the cell could call it
    forbidden = "seqlearn.bptt.rnn_forward is a reference"
    with pytest.raises(Exception, match=forbidden) as info:
        question.call("cheat", (), {})
    assert type(info.value).__name__ == "ForbiddenReference"
    question.close()
