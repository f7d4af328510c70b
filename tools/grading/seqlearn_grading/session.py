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
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from seqlearn_grading import wire
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
    """A clean Python with the assignment's libraries loaded, forked once per
    question."""

    def __init__(self, workdir: str, preload: list[str], forbid: list[str]):
        self.control, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MPLBACKEND="Agg")
        starter = ("import sys; from seqlearn_grading.sandbox import main; "
                   "main(int(sys.argv[1]))")
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", starter, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), cwd=workdir, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        theirs.close()
        wire.send_pickle(self.control, {"preload": preload, "forbid": forbid})
        self.ready = False
        self.guards = 0

    def wait_ready(self, timeout: float = 600.0) -> None:
        if self.ready:
            return
        try:
            reply = wire.decode(wire.receive(self.control, timeout))
        except (wire.Timeout, wire.WireError, OSError) as error:
            raise AutograderProblem(f"the sandbox did not start ({error!r})") from None
        if not (isinstance(reply, tuple) and reply and reply[0] == "ready"):
            raise AutograderProblem(f"the sandbox did not start (it said {reply!r})")
        self.ready, self.guards = True, reply[1]

    def fork(self) -> tuple[int, socket.socket]:
        self.wait_ready()
        wire.send_pickle(self.control, ("fork",))
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
    notes: list[str] = field(default_factory=list)
    spent: float = 0.0
    pid: int | None = None
    sock: socket.socket | None = None
    started: bool = False
    out_of_time: str | None = None                   # why later calls are not run

    # ------------------------------------------------------------------ the process

    def _kill(self) -> int | None:
        code = None
        if self.pid is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            code = self.template().reap(self.pid)
        if self.sock is not None:
            self.sock.close()
        self.pid, self.sock, self.started = None, None, False
        return code

    def _ask(self, request: tuple, timeout: float) -> Any:
        wire.send_pickle(self.sock, request)
        return wire.decode(wire.receive(self.sock, timeout))

    def _exec(self, cell: Cell) -> bool:
        """Run one cell; False when it ran too long or ended the process (it is then
        bad)."""
        try:
            reply = self._ask(("exec", cell.index, cell.source), self.limits.cell)
        except wire.Timeout:
            self._kill()
            self.bad_cells[cell.index] = f"it ran longer than {self.limits.cell:g} s"
            return False
        except (wire.WireError, OSError):
            code = self._kill()
            self.bad_cells[cell.index] = (f"it ended the Python process (exit code "
                                          f"{code})")
            return False
        if reply[0] == "error" and cell.question == self.name:
            self.notes.append(f"cell {cell.index} raised {reply[1]}: {reply[2][:300]}")
        return True

    def start(self) -> None:
        if self.started:
            return
        while True:
            self.pid, self.sock = self.template().fork()
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
                                  self.limits.cell)
            except (wire.Timeout, wire.WireError, OSError):
                self._kill()
                raise AutograderProblem("the model answers of the earlier questions "
                                        "could not be loaded") from None
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
            reply = self._ask(("lookup", name), self.limits.cell)
        except (wire.Timeout, wire.WireError, OSError):
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
            reply = wire.decode(payload)
        except wire.WireError as error:
            raise AssertionError(f"{name} returned something the autograder cannot "
                                 f"read ({error})") from None
        if reply[0] == "result":
            return reply[1]
        if reply[0] == "raised":
            raise _student_error(str(reply[1]), str(reply[2]), list(reply[3]), name)
        if reply[0] == "missing":
            raise AssertionError(f"{name} is not defined: run the cell that defines it")
        raise AutograderProblem(f"unexpected reply {reply[0]!r}")


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
