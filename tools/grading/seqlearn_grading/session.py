"""The grader's side of the sandboxes: the template, a question's cells, the calls.

:class:`Template` starts ``seqlearn_grading.sandbox`` in a clean Python and asks it for
one copy per question. :class:`Question` runs the student's cells in its copy, each cell
with a time limit (a cell that runs too long or ends the process is left out, once for
all questions, and the copy is rebuilt without it), binds the model answers of earlier
questions that this one builds on, and calls the student's functions with a time limit
per call and per question. :class:`RemoteFunction` is what a test receives in place of a
student's function.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from seqlearn_grading import isolation, wire
from seqlearn_grading.notebook import Cell


class TimeLimitExceeded(Exception):
    """A student's function, or the question's tests together, ran past the time
    limit."""


class ProcessEnded(Exception):
    """The student's process ended (``os._exit``, a crash, a kill) while it ran
    something."""


class AutograderProblem(Exception):
    """The sandbox could not be used; the message says why."""


@dataclass
class Limits:
    question: float = 60.0       # seconds for all calls of one question's tests
    call: float = 20.0           # seconds for one call of a student's function
    cell: float = 60.0           # seconds for one notebook cell


def _sendable(value: Any) -> Any:
    """``value`` with tensors that carry a graph detached (they cannot be pickled)."""
    if isinstance(value, (list, tuple)):
        items = [_sendable(v) for v in value]
        if hasattr(value, "_fields"):                    # a named tuple
            return type(value)(*items)
        return type(value)(items)
    if isinstance(value, dict):
        return {k: _sendable(v) for k, v in value.items()}
    if type(value).__module__.startswith("torch") and hasattr(value, "grad_fn"):
        if value.grad_fn is not None:
            return value.detach()
    return value


class Template:
    """A clean Python with the assignment's libraries loaded, inside namespaces of its
    own (:mod:`seqlearn_grading.isolation`), forked once per question.

    ``forbid`` names the references no question's code may reach; ``unisolated`` (or
    ``SEQLEARN_GRADING_UNISOLATED=1``) allows grading on a machine without namespaces
    (the student's code then runs as the grader, which the report says).
    """

    count = 0

    def __init__(self, workdir: str, preload: list[str], forbid: list[str], *,
                 unisolated: bool = False):
        self.mode = isolation.isolation_mode()
        asked = os.environ.get("SEQLEARN_GRADING_UNISOLATED")
        if asked == "force":
            self.mode = None       # only to show what the walls stop (tests, demos)
        if self.mode is None and not unisolated and asked not in ("1", "force"):
            raise AutograderProblem(
                "this machine allows no Linux namespaces (unshare failed as root and "
                "in a user namespace), so a student's code would run as the grader; "
                "grading refused (set unisolated: true in the plugin's configuration, "
                "or SEQLEARN_GRADING_UNISOLATED=1, only for trusted submissions)")
        Template.count += 1
        self.scratch = tempfile.mkdtemp(prefix="seqlearn-sandbox-")
        os.chmod(self.scratch, 0o700)
        self.per_question: dict[tuple[str, ...], dict[str, Any]] = {}
        overlays, in_memory = isolation.strip_functions(
            forbid, os.path.join(self.scratch, "forbidden"))
        modules = list(preload) + ["seqlearn_grading"] + \
            [d.split(".")[0] for d in forbid]
        self.cgroups = isolation.make_cgroups(
            f"seqlearn-sandbox-{os.getpid()}-{Template.count}") \
            if self.mode == "root" else []
        root = os.path.join(self.scratch, "root")
        os.mkdir(root)
        setup = {"mode": self.mode, "root": root, "handout": workdir,
                 "read_only": isolation.read_only_paths(modules),
                 "overlays": overlays, "forbid_in_memory": in_memory,
                 "preload": preload, "cgroups": self.cgroups}
        self.control, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MPLBACKEND="Agg")
        starter = ("import sys; from seqlearn_grading.sandbox import main; "
                   "main(int(sys.argv[1]))")
        command = isolation.template_command(
            self.mode, [isolation.python_executable(), "-I", "-c", starter,
                        str(theirs.fileno())])
        self.process = subprocess.Popen(
            command, pass_fds=(theirs.fileno(),), cwd="/", env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        theirs.close()
        wire.send_pickle(self.control, setup)
        self.ready = False

    def isolation(self) -> str:
        """One line for the report: how the student's code is kept from the grader."""
        if self.mode is None:
            return ("NOT ISOLATED: no namespaces here; the student's code ran as "
                    "the grader, with the grader's files in reach")
        who = "the user nobody" if self.mode == "root" else \
            "a user namespace without capabilities"
        walls = (f"sandbox: PID, mount, network, IPC and UTS namespaces; a read-only "
                 f"root of its own; {who}; own /tmp per question")
        if self.cgroups:
            walls += "; cgroup limits on memory and processes"
        return walls

    def question_config(self, forbid: list[str]) -> dict[str, Any]:
        """What a copy removes for a question that forbids more than the assignment."""
        key = tuple(sorted(forbid))
        if key not in self.per_question:
            folder = os.path.join(self.scratch, f"question-{len(self.per_question)}")
            overlays, _ = isolation.strip_functions(list(key), folder)
            contents = {original: (open(replacement, "rb").read() if replacement
                                   else None)
                        for original, replacement in overlays.items()}
            self.per_question[key] = {"overlays": contents, "forbid": list(key)}
        return self.per_question[key]

    def wait_ready(self, timeout: float = 600.0) -> None:
        if self.ready:
            return
        try:
            reply = wire.decode(wire.receive(self.control, timeout))
        except (wire.Timeout, wire.WireError, OSError) as error:
            raise AutograderProblem(f"the sandbox did not start ({error!r})") from None
        if isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "failed":
            raise AutograderProblem(f"the sandbox could not isolate itself: {reply[1]}")
        if not (isinstance(reply, tuple) and reply and reply[0] == "ready"):
            raise AutograderProblem(f"the sandbox did not start (it said {reply!r})")
        self.ready = True

    def fork(self, forbid: list[str] | None = None) -> tuple[int, socket.socket]:
        """A fresh copy; ``forbid`` names references removed in this copy only."""
        self.wait_ready()
        config = self.question_config(forbid) if forbid else {}
        wire.send_pickle(self.control, ("fork", config))
        data, fds = b"", []
        while len(data) < 9:
            chunk, more, _, _ = socket.recv_fds(self.control, 9 - len(data), 1)
            if not chunk:
                raise AutograderProblem("the sandbox template has ended")
            data, fds = data + chunk, fds + list(more)
        if data[:1] != b"F" or len(fds) != 1:
            raise AutograderProblem("the sandbox template answered a fork with "
                                    "nonsense")
        (pid,) = struct.unpack(">Q", data[1:9])
        return pid, socket.socket(fileno=fds[0])

    def reap(self, pid: int) -> int | None:
        wire.send_pickle(self.control, ("reap", pid))
        try:
            reply = wire.decode(wire.receive(self.control, 30.0))
        except (wire.Timeout, wire.WireError, OSError):
            return None
        return reply[1] if isinstance(reply, tuple) and len(reply) == 2 else None

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        try:
            wire.send_pickle(self.control, ("quit",))
        except OSError:
            pass
        self.control.close()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            pass
        isolation.remove_cgroups(self.cgroups)
        shutil.rmtree(self.scratch, ignore_errors=True)


class NotAFunction:
    """A name that the student's notebook defines as something other than a function."""

    def __init__(self, type_name: str):
        self.type_name = type_name


def _not_a_function(type_name: str) -> NotAFunction:
    name = type_name if type_name.isidentifier() else "object"
    return type(name, (NotAFunction,), {})(type_name)


def _student_error(kind: str, message: str, where: list[str],
                   function: str) -> Exception:
    """An exception that reads like the one the student's function raised."""
    import builtins

    base = getattr(builtins, kind, None)
    if not (isinstance(base, type) and issubclass(base, Exception)) or \
            issubclass(base, (UnicodeError, OSError)):
        base = type(kind if kind.isidentifier() else "Error", (Exception,), {})
    text = f"in {function}: {message}" if message else f"in {function}"
    if where:
        text += f" ({'; '.join(where)})"
    return base(text)


@dataclass
class Question:
    """One question's copy of the student's process, and what happened to it."""

    template: Any                                # a callable returning a live Template
    name: str
    cells: list[Cell]
    limits: Limits
    bad_cells: dict[int, str]                    # shared by all questions of a notebook
    imports: list[str] = field(default_factory=list)
    references: dict[str, str] = field(default_factory=dict)
    forbid: list[str] = field(default_factory=list)  # removed for this question only
    notes: list[str] = field(default_factory=list)
    spent: float = 0.0
    pid: int | None = None
    sock: socket.socket | None = None
    started: bool = False
    out_of_time: str | None = None                   # why later calls are not run

    # ------------------------------------------------------------------ the process

    def _kill(self) -> int | None:
        code = None
        if self.pid is not None:          # a PID of the sandbox's namespace: it reaps
            code = self.template().reap(self.pid)
        if self.sock is not None:
            self.sock.close()
        self.pid, self.sock, self.started = None, None, False
        return code

    def _ask(self, request: tuple, timeout: float, shapes: dict[str, int]) -> Any:
        wire.send_pickle(self.sock, request)
        return self._checked(wire.decode(wire.receive(self.sock, timeout)), shapes)

    def _checked(self, reply: Any, shapes: dict[str, int]) -> Any:
        """``reply`` if it is one of ``shapes`` ({first item: length}); the copy is
        ended otherwise (it is the student's process: a cell that forks and keeps
        running answers the grader too, out of turn)."""
        if isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "unconfined":
            self._kill()
            raise AutograderProblem(f"the sandbox could not confine a question's copy: "
                                    f"{reply[1]}")
        if not (isinstance(reply, tuple) and reply and isinstance(reply[0], str)
                and shapes.get(reply[0]) == len(reply)):
            self._kill()
            raise ProcessEnded("the process running your notebook answered the grader "
                               "out of turn (does a cell start processes that keep "
                               "running?)")
        return reply

    def _exec(self, cell: Cell) -> bool:
        """Run one cell; False when it ran too long or ended the process (it is then
        bad)."""
        try:
            reply = self._ask(("exec", cell.index, cell.source), self.limits.cell,
                              {"ok": 1, "error": 4})
        except wire.Timeout:
            self._kill()
            self.bad_cells[cell.index] = f"it ran longer than {self.limits.cell:g} s"
            return False
        except (wire.WireError, OSError):
            code = self._kill()
            self.bad_cells[cell.index] = (f"it ended the Python process (exit code "
                                          f"{code})")
            return False
        except ProcessEnded as error:
            self.bad_cells[cell.index] = str(error)
            return False
        if reply[0] == "error" and cell.question == self.name:
            self.notes.append(f"cell {cell.index} raised {reply[1]}: "
                              f"{str(reply[2])[:300]}")
        return True

    def start(self) -> None:
        if self.started:
            return
        while True:
            self.pid, self.sock = self.template().fork(self.forbid)
            for cell in self.cells:
                if cell.index in self.bad_cells:
                    continue
                if not self._exec(cell):
                    break
            else:
                break
        if self.references:
            try:
                reply = self._ask(("references", self.imports, self.references),
                                  self.limits.cell, {"ok": 2})
            except (wire.Timeout, wire.WireError, OSError, ProcessEnded):
                self._kill()
                raise AutograderProblem("the model answers of the earlier questions "
                                        "could not be loaded in the process running "
                                        "your notebook") from None
            if reply[1]:
                raise AutograderProblem(f"model answers missing: {reply[1]}")
        self.started = True

    def close(self) -> None:
        self._kill()

    def left_out(self) -> list[str]:
        """Notes on the cells this question ran without."""
        return [f"cell {c.index} was left out: {self.bad_cells[c.index]}"
                for c in self.cells if c.index in self.bad_cells]

    # ------------------------------------------------------------------ the answers

    def value(self, name: str) -> Any:
        """What a test receives for ``name``: a proxy, None (undefined) or a
        non-function."""
        try:
            self.start()
            reply = self._ask(("lookup", name), self.limits.cell,
                              {"missing": 1, "value": 2, "callable": 1})
        except (wire.Timeout, wire.WireError, OSError, ProcessEnded):
            self._kill()
            return RemoteFunction(self, name)        # its call says what went wrong
        if reply[0] == "missing":
            return None
        if reply[0] == "value":
            return _not_a_function(str(reply[1]))
        return RemoteFunction(self, name)

    def call(self, name: str, args: tuple, kwargs: dict) -> Any:
        if self.out_of_time:
            raise TimeLimitExceeded(f"not run: {self.out_of_time}")
        left = self.limits.question - self.spent
        if left <= 0:
            raise TimeLimitExceeded(f"not run: this question's tests used up their "
                                    f"{self.limits.question:g} s")
        self.start()
        timeout = min(self.limits.call, left)
        try:
            request = ("call", name, _sendable(tuple(args)), _sendable(dict(kwargs)))
            wire.send_pickle(self.sock, request)
        except (TypeError, AttributeError, ValueError) as error:
            raise AutograderProblem(f"the inputs for {name} could not be sent: {error}")
        except OSError:
            code = self._kill()
            raise ProcessEnded(f"the Python process running your notebook had ended "
                               f"before {name} was called (exit code {code})") from None
        begun = time.monotonic()
        try:
            payload = wire.receive(self.sock, timeout)
        except wire.Timeout:
            self.spent += time.monotonic() - begun
            self._kill()
            if timeout < self.limits.call:
                self.out_of_time = (f"this question's tests used up their "
                                    f"{self.limits.question:g} s")
                raise TimeLimitExceeded(f"{name} was stopped: "
                                        f"{self.out_of_time}") from None
            self.out_of_time = (f"{name} ran out of time in an earlier test of this "
                                "question")
            raise TimeLimitExceeded(f"{name} did not return within {timeout:g} s: an "
                                    "endless loop, or far too slow") from None
        except (wire.WireError, OSError):
            self.spent += time.monotonic() - begun
            code = self._kill()
            raise ProcessEnded(f"the Python process ended while {name} ran (exit code "
                               f"{code}: sys.exit, os._exit or a crash)") from None
        self.spent += time.monotonic() - begun
        try:
            reply = self._checked(wire.decode(payload),
                                  {"result": 2, "raised": 4, "missing": 1})
        except wire.WireError as error:
            raise AssertionError(f"{name} returned something the autograder cannot "
                                 f"read ({error})") from None
        if reply[0] == "result":
            return reply[1]
        if reply[0] == "raised":
            where = reply[3] if isinstance(reply[3], list) else []
            raise _student_error(str(reply[1]), str(reply[2]), [str(w) for w in where],
                                 name)
        raise AssertionError(f"{name} is not defined: run the cell that defines it")


class RemoteFunction:
    """A student's function as a test sees it: calling it runs it in the question's
    copy."""

    def __init__(self, question: Question, name: str):
        self._question = question
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._question.call(self.__name__, args, kwargs)

    def __reduce__(self) -> tuple:
        from seqlearn_grading import sandbox

        return sandbox._student, (self.__name__,)

    def __repr__(self) -> str:
        return f"<your function {self.__name__}>"


class Environment(dict):
    """What otter passes a test function: every name it asks for comes from the
    question."""

    def __init__(self, question: Question):
        super().__init__()
        self._question = question
        self._cache: dict[str, Any] = {}

    def get(self, name: str, default: Any = None) -> Any:
        if name not in self._cache:
            self._cache[name] = self._question.value(name)
        return self._cache[name]

    __getitem__ = get
