"""The processes that run a student's code: a clean template, and a copy per question.

:func:`main` (``python -I -c "... main(FD)"``) starts the *template*. It imports the
libraries the assignment uses (before any student code exists in it), finds the
reference functions that the student's answers may not call, and then only forks: for
every question the grader asks for a fresh copy, which runs the student's notebook cells
and calls the student's functions on the grader's inputs. Each copy talks to the grader
over its own socket; what it sends back is encoded by
:func:`seqlearn_grading.wire.encode` and never unpickled by the grader.

A copy is the student's process: whatever a cell does there (patching ``seqlearn``,
rewriting files, ending the process) changes only that copy. While a student's function
runs for the grader, the forbidden references raise, and starting other processes is
refused.
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

from seqlearn_grading import wire

_STUDENT_NS: dict[str, Any] = {}       # the namespace of the notebook being run
_IN_CALL = [False]                     # a student's function is running for the grader


class ForbiddenReference(RuntimeError):
    """A graded function called a reference that the assignment asks the student to
    write."""


def _student(name: str) -> Any:
    """Unpickling a grader-side proxy of a student's function gives the function
    itself."""
    return _STUDENT_NS.get(name)


# -----------------------------------------------------------------------------
# forbidden names


def _resolve(dotted: str) -> tuple[Any, str, Any] | None:
    """(owner, attribute, object) for ``package.module.name`` or
    ``module.Class.method``."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:cut]))
        except Exception:
            continue
        try:
            for part in parts[cut:-1]:
                owner = getattr(owner, part)
            if isinstance(owner, type):          # the class that defines the method
                for klass in owner.__mro__:
                    if parts[-1] in vars(klass):
                        owner = klass
                        break
            return owner, parts[-1], getattr(owner, parts[-1])
        except AttributeError:
            return None
    return None


def _raiser_code(freevars: int, message: str) -> types.CodeType:
    """Code that raises ForbiddenReference and has ``freevars`` free variables (to fit
    any function's closure)."""
    names = [f"_v{i}" for i in range(freevars)]
    lines = ["def _outer():", *[f"    {n} = None" for n in names],
             "    def forbidden(*args, **kwargs):"]
    if names:
        lines.append(f"        ({', '.join(names)},)")
    lines += [f"        raise _Forbidden({message!r})", "    return forbidden"]
    scope: dict[str, Any] = {}
    exec("\n".join(lines), scope)
    return scope["_outer"]().__code__


class Guards:
    """Swaps every forbidden reference for one that raises, while a graded function
    runs."""

    def __init__(self, dotted_names: list[str]):
        self.swaps: list[tuple[str, Any, str, Any, Any]] = []
        for dotted in dotted_names:
            found = _resolve(dotted)
            if found is None:
                continue
            owner, attribute, obj = found
            message = (f"{dotted} is a reference this assignment asks you to write "
                       "yourself: the autograder does not let a graded answer call it")
            target = getattr(obj, "__func__", obj)
            if isinstance(target, types.FunctionType):
                raiser = _raiser_code(len(target.__code__.co_freevars), message)
                target.__globals__.setdefault("_Forbidden", ForbiddenReference)
                self.swaps.append(("code", target, "__code__", target.__code__, raiser))
            elif callable(obj):
                def forbidden(*args: Any, _message: str = message,
                              **kwargs: Any) -> Any:
                    raise ForbiddenReference(_message)
                self.swaps.append(("attr", owner, attribute, obj, forbidden))

    def _set(self, forbidden: bool) -> None:
        for _, owner, attribute, original, replacement in self.swaps:
            try:
                setattr(owner, attribute, replacement if forbidden else original)
            except (AttributeError, TypeError):
                pass

    def on(self) -> None:
        self._set(True)

    def off(self) -> None:
        self._set(False)


def _refuse_processes(event: str, args: tuple) -> None:
    if _IN_CALL[0] and event in ("subprocess.Popen", "os.system", "os.exec",
                                 "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
                                 "pty.spawn"):
        raise ForbiddenReference("a graded answer may not start other processes")


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


def _serve(sock: socket.socket, guards: Guards) -> None:
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
            guards.on()
            _IN_CALL[0] = True
            try:
                result = function(*args, **kwargs)
            except BaseException as error:
                _IN_CALL[0] = False
                guards.off()
                _reply(sock, ("raised", *_describe(error)))
                continue
            _IN_CALL[0] = False
            guards.off()
            _reply(sock, ("result", result))
        else:
            _reply(sock, ("error", "ValueError", f"unknown request {kind!r}", []))


def _become_copy(control: socket.socket, sock: socket.socket, guards: Guards,
                 workdir: str) -> None:
    """In the forked copy: forget the template's channel, silence output, serve the
    grader."""
    control.close()
    os.setpgid(0, 0)                 # the grader ends the copy and its children at once
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.stdout = open(os.devnull, "w")
    sys.stderr = open(os.devnull, "w")
    if workdir not in sys.path:
        sys.path.insert(0, workdir)  # the student's own files import as in a notebook
    try:
        _serve(sock, guards)
    finally:
        os._exit(0)


def main(fd: int) -> None:
    control = socket.socket(fileno=fd)
    setup = wire.receive_pickle(control)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
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
    guards = Guards(setup["forbid"])
    sys.addaudithook(_refuse_processes)
    workdir = os.getcwd()
    wire.send(control, wire.encode(("ready", len(guards.swaps))))
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
                _become_copy(control, theirs, guards, workdir)
            theirs.close()
            socket.send_fds(control, [b"F" + struct.pack(">Q", pid)], [ours.fileno()])
            ours.close()
        elif request[0] == "reap":
            try:
                _, status = os.waitpid(request[1], 0)
                code = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                code = None
            wire.send(control, wire.encode(("reaped", code)))
        else:
            return


if __name__ == "__main__":
    main(int(sys.argv[1]))
