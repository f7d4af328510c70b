"""The processes that run a student's code: a clean template, and a copy per question.

:func:`main` (``python -I -c "... main(FD)"``, started by the grader inside new
namespaces) starts the *template*. Before it imports anything it moves into a root file
system of its own (:func:`seqlearn_grading.isolation.enter_root`), in which the
references the assignment forbids exist only as functions that raise. It then imports
the libraries the assignment uses and only forks: for every question the grader asks
for a fresh copy, which confines itself (its own /tmp and working folder, resource
limits, the user ``nobody``, no capabilities), runs the student's notebook cells and
calls the student's functions on the grader's inputs. Each copy talks to the grader
over its own socket; what it sends back is encoded by
:func:`seqlearn_grading.wire.encode` and never unpickled by the grader.

A copy is the student's process: whatever a cell does there (patching ``seqlearn``,
rewriting files, starting processes, ending the process) changes only that copy, and
when its question is done the template, process 1 of the namespace, kills every process
but itself.
"""

from __future__ import annotations

import builtins
import importlib
import linecache
import os
import resource
import signal
import socket
import struct
import sys
import traceback
import types
from typing import Any

from seqlearn_grading import isolation, wire

_STUDENT_NS: dict[str, Any] = {}       # the namespace of the notebook being run


class ForbiddenReference(RuntimeError):
    """A graded function called a reference that the assignment asks the student to
    write."""


def _student(name: str) -> Any:
    """Unpickling a grader-side proxy of a student's function gives the function
    itself."""
    return _STUDENT_NS.get(name)


# ----------------------------------------------------------------------------- notebook
# cells


class _Shell:
    """Enough of IPython's ``get_ipython()`` for magics to do nothing harmful."""

    def __init__(self, namespace: dict[str, Any]):
        self.user_ns = namespace

    def run_line_magic(self, name: str, line: str, *args: Any, **kwargs: Any) -> None:
        if name == "time" and line.strip():
            _run_source(line, "<magic>", self.user_ns)

    def run_cell_magic(self, name: str, line: str, cell: str, *args: Any,
                       **kwargs: Any) -> None:
        if name in ("time", "timeit", "capture", "prun"):
            _run_source(cell, "<magic>", self.user_ns)

    def system(self, *args: Any, **kwargs: Any) -> None:
        return None

    getoutput = system


def _transform(source: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:
        return source


def _run_source(source: str, filename: str, namespace: dict[str, Any]) -> None:
    source = _transform(source)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)


def _student_traceback(error: BaseException) -> list[str]:
    """The frames of the student's cells in ``error``'s traceback: ``line N of cell K:
    code``."""
    lines = []
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename.startswith("<cell "):
            where = frame.filename.strip("<>")
            code = (frame.line or "").strip()
            lines.append(f"line {frame.lineno} of {where}: {code}")
    return lines[-3:]


def _describe(error: BaseException) -> tuple[str, str, list[str]]:
    try:
        message = str(error)
    except Exception:
        message = "(its message could not be read)"
    return type(error).__name__, message[:2000], _student_traceback(error)


# ----------------------------------------------------------------------------- one
# question


def _reply(sock: socket.socket, value: Any) -> None:
    try:
        payload = wire.encode(value)
    except Exception as error:          # a value that even the encoder cannot walk
        payload = wire.encode(("result", wire.Unreadable(type(error).__name__)))
    wire.send(sock, payload)


def _serve(sock: socket.socket) -> None:
    module = types.ModuleType("__main__")
    namespace = module.__dict__
    namespace.update({"__builtins__": builtins, "display": lambda *a, **k: None})
    namespace["get_ipython"] = lambda: shell
    shell = _Shell(namespace)
    sys.modules["__main__"] = module
    global _STUDENT_NS
    _STUDENT_NS = namespace
    while True:
        try:
            request = wire.receive_pickle(sock)
        except Exception:
            os._exit(0)
        kind = request[0]
        if kind == "exec":
            _, label, source = request
            try:
                _run_source(source, f"<cell {label}>", namespace)
                _reply(sock, ("ok",))
            except BaseException as error:              # SystemExit included
                _reply(sock, ("error", *_describe(error)))
        elif kind == "references":
            _, imports, definitions = request
            scope: dict[str, Any] = {"__name__": "reference", "__builtins__": builtins}
            for line in imports:
                try:
                    exec(line, scope)
                except Exception:
                    pass
            missing = []
            for name, source in definitions.items():
                try:
                    exec(compile(source, f"<reference {name}>", "exec"), scope)
                    namespace[name] = scope[name]
                except Exception:
                    missing.append(name)
            _reply(sock, ("ok", missing))
        elif kind == "lookup":
            value = namespace.get(request[1])
            if value is None:
                _reply(sock, ("missing",))
            elif callable(value):
                _reply(sock, ("callable",))
            else:
                _reply(sock, ("value", wire._type_name(value)))
        elif kind == "call":
            _, name, args, kwargs = request
            function = namespace.get(name)
            if function is None:
                _reply(sock, ("missing",))
                continue
            try:
                result = function(*args, **kwargs)
            except BaseException as error:
                _reply(sock, ("raised", *_describe(error)))
                continue
            _reply(sock, ("result", result))
        else:
            _reply(sock, ("error", "ValueError", f"unknown request {kind!r}", []))


def _become_copy(control: socket.socket, sock: socket.socket, setup: dict[str, Any],
                 question: dict[str, Any]) -> None:
    """In the forked copy: forget the template's channel, confine itself, silence
    output, serve the grader."""
    control.close()
    os.setpgid(0, 0)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        if setup["mode"] is not None:
            isolation.confine_copy(setup, question.get("overlays") or {})
        isolation.remove_in_memory(list(question.get("forbid") or []))
    except BaseException as error:   # never run a student's code unconfined
        try:
            wire.receive_pickle(sock)
            _reply(sock, ("unconfined", f"{type(error).__name__}: {error}"))
        finally:
            os._exit(70)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w")
    sys.stderr = open(os.devnull, "w")
    workdir = os.getcwd()
    if workdir not in sys.path:
        sys.path.insert(0, workdir)  # the student's own files import as in a notebook
    try:
        _serve(sock)
    finally:
        os._exit(0)


def main(fd: int) -> None:
    control = socket.socket(fileno=fd)
    setup = wire.receive_pickle(control)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    problem = None
    if setup["mode"] is not None:
        try:
            for folder in setup.get("cgroups", []):    # this process and all it forks
                with open(os.path.join(folder, "cgroup.procs"), "w") as procs:
                    procs.write(str(os.getpid()))
            with open("/proc/self/oom_score_adj", "w") as adjust:
                adjust.write("-1000")
        except OSError:
            pass
        try:
            isolation.enter_root(setup)
        except (isolation.IsolationError, OSError) as error:
            problem = f"{type(error).__name__}: {error}"
    else:
        os.chdir(setup["handout"])
    if problem is not None:
        wire.send(control, wire.encode(("failed", problem)))
        return
    try:
        import matplotlib

        matplotlib.use("Agg")
    except Exception:
        pass
    for name in setup["preload"]:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    removed = isolation.remove_in_memory(setup["forbid_in_memory"])
    wire.send(control, wire.encode(("ready", removed)))
    while True:
        try:
            request = wire.receive_pickle(control)
        except Exception:
            return
        if request[0] == "fork":
            ours, theirs = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                ours.close()
                _become_copy(control, theirs, setup, request[1])
            theirs.close()
            socket.send_fds(control, [b"F" + struct.pack(">Q", pid)], [ours.fileno()])
            ours.close()
        elif request[0] == "reap":
            # A copy that had ended keeps its exit status until reaped (a signal to a
            # zombie changes nothing), so killing first loses no exit code.
            code = None
            if setup["mode"] is not None:       # forks, setsid orphans, everything
                code = isolation.kill_all_but_me().get(request[1])
            else:
                try:
                    os.killpg(request[1], signal.SIGKILL)
                except OSError:
                    pass
                try:
                    code = os.waitstatus_to_exitcode(os.waitpid(request[1], 0)[1])
                except ChildProcessError:
                    pass
            wire.send(control, wire.encode(("reaped", code)))
        else:
            return


if __name__ == "__main__":
    main(int(sys.argv[1]))
