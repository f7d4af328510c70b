"""tools/grading: the sandbox that runs a student's code, the wire that brings values
back.

The wire never unpickles what a sandbox sends and rebuilds plain data only. A question's
copy of the student's process leaves out a cell that runs too long or ends the process
(once, for every later question too), stops a function that does not return, reports one
that ends the process, and makes the forbidden references raise while a graded function
runs.
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile

import numpy as np
import pytest
import sympy
import torch

from layout import ROOT
from seqlearn_grading import isolation, wire
from seqlearn_grading.notebook import read_student_notebook, written_answers
from seqlearn_grading.session import (AutograderProblem, Limits, ProcessEnded, Question,
                                      Template, TimeLimitExceeded)


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


BYTECODE_AT_START: list[str] = []
"""seqlearn/bptt/__pycache__ when the module's template started (the ``template``
fixture compiles the folder first, as a used installation has it)."""


@pytest.fixture(scope="module")
def template():
    import compileall

    import seqlearn.bptt

    folder = os.path.dirname(seqlearn.bptt.__file__)
    compileall.compile_dir(folder, maxlevels=0, quiet=1)
    BYTECODE_AT_START[:] = sorted(os.listdir(os.path.join(folder, "__pycache__")))
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


def test_forbidden_references_do_not_exist_in_the_sandbox(template):
    """Removed before anything imported them: not in a cell, not in a graded call, not
    after a reload, not in the source file or the cached bytecode (the bytecode of the
    module's neighbours stays)."""
    forbidden = "seqlearn.bptt.rnn_forward is a reference"
    notebook = cells("import glob, importlib, inspect, os\nimport numpy as np\n"
                     "import seqlearn.bptt as bptt\n"
                     "from seqlearn.bptt import init_params, rnn_forward",
                     "params = init_params(1, 2, 1, np.random.default_rng(0))\n"
                     "y, _ = rnn_forward(np.zeros((1, 2, 1)), np.zeros((1, 2)), "
                     "params)",
                     "def cheat():\n    return rnn_forward(np.zeros((1, 2, 1)), "
                     "np.zeros((1, 2)), params)[0]",
                     "def reloaded():\n    importlib.reload(importlib.import_module("
                     "rnn_forward.__module__))\n    importlib.reload(bptt)\n"
                     "    return bptt.rnn_forward(np.zeros((1, 2, 1)), "
                     "np.zeros((1, 2)), params)[0]",
                     "def source():\n"
                     "    return open(inspect.getsourcefile(rnn_forward)).read()",
                     "def cached():\n    return os.listdir(os.path.dirname("
                     "inspect.getsourcefile(rnn_forward)) + '/__pycache__')",
                     "def grad():\n    import torch\n"
                     "    x = torch.ones(2, requires_grad=True)\n"
                     "    return torch.autograd.grad((x * x).sum(), x)[0]")
    import py_compile

    import seqlearn.bptt.rnn

    # Bytecode of the original, written after the sandbox started, is not seen either.
    written = py_compile.compile(seqlearn.bptt.rnn.__file__, doraise=True)
    question = Question(lambda: template, "q1", notebook, Limits(), {})
    for name in ("cheat", "reloaded"):
        with pytest.raises(Exception, match=forbidden) as info:
            question.call(name, (), {})
        assert type(info.value).__name__ == "ForbiddenReference"
    text = question.call("source", (), {})
    assert "def rnn_forward" in text and "ForbiddenReference" in text
    assert "np.tanh" not in text.split("def rnn_forward")[1].split("\ndef ")[0]
    # no bytecode of the replaced module, old or new; the folder's other modules keep
    # theirs (they load without compiling)
    kept = [n for n in BYTECODE_AT_START if not n.startswith("rnn.")]
    assert kept and sorted(question.call("cached", (), {})) == kept, BYTECODE_AT_START
    assert os.path.isfile(written)
    assert question.call("grad", (), {}).tolist() == [2.0, 2.0]  # allowed in q1
    question.close()
    assert any("cell 1 raised ForbiddenReference" in n for n in question.notes)
    by_hand = Question(lambda: template, "q2", notebook, Limits(), {},
                       forbid=["torch.autograd.grad"])
    with pytest.raises(Exception, match="torch.autograd.grad is a reference"):
        by_hand.call("grad", (), {})
    by_hand.close()


def test_the_sandbox_is_isolated(monkeypatch):
    assert isolation.isolation_mode() is not None, (
        "this machine allows no Linux namespaces: the autograder refuses to grade here")
    monkeypatch.setattr(isolation, "isolation_mode", lambda: None)
    with pytest.raises(AutograderProblem, match="allows no Linux namespaces.*refused"):
        Template(tempfile.gettempdir(), ["numpy"], [])


def test_a_copy_sees_nothing_of_the_grader_and_keeps_nothing(template):
    """Another user, a root of its own, a /proc of its own namespace, no network, an
    empty /tmp per question."""
    notebook = cells("import os, socket",
                     "def facts():\n    return (os.getuid(), os.getcwd(), "
                     "sorted(os.listdir('/')), [p for p in os.listdir('/proc') "
                     "if p.isdigit()], os.listdir('/tmp'))",
                     "def exists(path):\n    return os.path.exists(path)",
                     "def leave_a_file():\n    open('/tmp/left', 'w').write('x')\n"
                     "    open('left-here', 'w').write('x')",
                     "def write(path):\n    open(path, 'w').write('x')",
                     "def connect():\n    socket.create_connection(('1.1.1.1', 80), "
                     "timeout=2)")
    grader_file = tempfile.NamedTemporaryFile(dir=os.path.expanduser("~"))
    first = Question(lambda: template, "q1", notebook, Limits(), {})
    uid, cwd, _, pids, tmp = first.call("facts", (), {})
    assert uid == (65534 if template.mode == "root" else 0) and cwd == "/student"
    assert len(pids) == 2 and "1" in pids and "left" not in tmp   # template and itself
    for path in (grader_file.name, template.scratch, __file__, ROOT / "assignments",
                 ROOT / "_build"):
        assert not first.call("exists", (str(path),), {}), path
    first.call("leave_a_file", (), {})
    for path in ("/usr/evil", "/etc/evil", sys.executable + "-evil"):
        with pytest.raises(Exception, match="Read-only file system|Permission denied"):
            first.call("write", (path,), {})
    with pytest.raises(Exception, match="(?i)unreachable|network"):
        first.call("connect", (), {})
    first.close()
    second = Question(lambda: template, "q2", notebook, Limits(), {})
    assert "left" not in second.call("facts", (), {})[4]
    assert not second.call("exists", ("left-here",), {})
    second.close()


def test_every_process_a_question_started_ends_with_it(template):
    """Forks, a setsid orphan and a fork bomb: none outlives its question."""
    notebook = cells("import os, time",
                     "def orphan():\n    if os.fork() == 0:\n        os.setsid()\n"
                     "        if os.fork() == 0:\n            while True:\n"
                     "                time.sleep(1)\n        os._exit(0)\n"
                     "    time.sleep(0.5)\n"
                     "    return len([p for p in os.listdir('/proc') if p.isdigit()])",
                     "def bomb():\n    made = 0\n    while True:\n"
                     "        if os.fork() == 0:\n            time.sleep(60)\n"
                     "            os._exit(0)\n        made += 1",
                     "def alive():\n    return [p for p in os.listdir('/proc') "
                     "if p.isdigit()]")
    question = Question(lambda: template, "q1", notebook, Limits(call=20.0), {})
    assert question.call("orphan", (), {}) >= 3      # template, copy, orphan (+ zombie)
    question.close()
    bombed = Question(lambda: template, "q2", notebook, Limits(call=20.0), {})
    with pytest.raises(Exception, match="(?i)resource|again|memory"):
        bombed.call("bomb", (), {})
    bombed.close()
    after = Question(lambda: template, "q3", notebook, Limits(), {})
    alive = after.call("alive", (), {})
    assert len(alive) == 2 and "1" in alive                  # the template and itself
    after.close()
    assert nobody_processes() == []


def nobody_processes() -> list[int]:
    """The host's processes of the user nobody (a sandbox's copies run as nobody)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == 65534:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def test_floods_cost_only_their_question(template):
    """Memory past the limit, a file past the limit, a full /tmp: the function fails,
    the sandbox lives on."""
    notebook = cells("import os",
                     "def memory():\n    hoard = []\n    while True:\n"
                     "        hoard.append(bytearray(1 << 28))",
                     "def disk(path):\n    with open(path, 'wb') as f:\n"
                     "        while True:\n            f.write(bytes(1 << 24))",
                     "def fine():\n    return 1")
    question = Question(lambda: template, "q1", notebook, Limits(call=60.0,
                                                                question=120.0), {})
    with pytest.raises(Exception) as info:
        question.call("memory", (), {})
    assert type(info.value).__name__ in ("MemoryError", "ProcessEnded")
    for path in ("/tmp/big", "/dev/shm/big", "big"):
        with pytest.raises(Exception, match="(?i)space|too large"):
            question.call("disk", (path,), {})
    question.close()
    again = Question(lambda: template, "q2", notebook, Limits(), {})
    assert again.call("fine", (), {}) == 1
    again.close()


def test_packages_under_tmp_stay_visible_beside_a_fresh_tmp():
    """A clone in a temporary folder: its packages (and .venv) live under /tmp, which
    every copy replaces with an empty one; they stay importable, read-only, and the
    copy's /tmp stays writable."""
    from pathlib import Path

    with tempfile.TemporaryDirectory(dir="/tmp") as folder, \
            tempfile.TemporaryDirectory() as workdir:
        package = Path(folder, "package_under_tmp")
        package.mkdir()
        (package / "__init__.py").write_text("VALUE = 7\n")
        sys.path.insert(0, folder)
        try:
            made = Template(workdir, ["package_under_tmp"], [])
            notebook = cells(f"import sys\nsys.path.insert(0, {folder!r})\n"
                             "import package_under_tmp",
                             "def value():\n    return package_under_tmp.VALUE",
                             "def write(path):\n    open(path, 'w').write('x')\n"
                             "    return True")
            question = Question(lambda: made, "q1", notebook, Limits(), {})
            assert question.call("value", (), {}) == 7
            assert question.call("write", ("/tmp/mine",), {})
            with pytest.raises(Exception, match="Read-only file system"):
                question.call("write", (str(package / "evil.py"),), {})
            question.close()
        finally:
            sys.path.remove(folder)
            made.close()
    assert not any(os.path.exists(group) for group in made.cgroups), made.cgroups
