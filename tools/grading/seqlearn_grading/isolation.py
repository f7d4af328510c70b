"""The walls around a student's code: namespaces, a root of its own, another user.

The grader starts the sandbox template with ``unshare`` in new PID, mount, network, IPC
and UTS namespaces (:func:`template_command`). Before it imports anything, the template
builds a root file system of its own (:func:`enter_root`): an empty ``tmpfs`` into which
only what Python needs is bound read-only (``/usr``, ``/lib``, ``/etc``, the Python
installation, the virtual environment, the packages the assignment imports and the
submission's own files), a fresh ``/proc`` that shows the namespace's processes only,
and a ``/dev`` with ``null``, ``zero`` and ``urandom``. It then moves into that root
with ``pivot_root`` and unmounts the old one, so the grader's files (the autograder
zip, the tests, the model answers, the output folder) are not hidden but absent.

Every question's copy (:func:`confine_copy`) then gets a mount namespace of its own with
empty ``/tmp``, ``/dev/shm`` and working folder, resource limits, and drops to the
unprivileged user ``nobody`` (as root) or to no capabilities at all (in a user
namespace, when the grader is not root). The template is process 1 of its PID namespace:
after every question it kills every other process in it (:func:`kill_all_but_me`):
forks, ``setsid`` orphans and threads included.

A reference that an assignment forbids is removed before anything imports it
(:func:`strip_functions`): the template imports a copy of its module in which the
function's body raises, bound over the original source file, and the module's cached
bytecode is hidden. Where the machine allows no namespaces, :func:`isolation_mode`
returns None and the grader refuses to grade unless told to grade unisolated.
"""

from __future__ import annotations

import ast
import ctypes
import errno
import importlib
import inspect
import os
import platform
import shutil
import subprocess
import sys
import types
from functools import lru_cache
from pathlib import Path
from typing import Any

NOBODY = 65534
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH, CLONE_NEWNS = 2, 0x00020000
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_CAP_AMBIENT = 38, 24, 47
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217}
NAMESPACES = ["--pid", "--fork", "--kill-child", "--mount", "--net", "--ipc", "--uts"]
WORKDIR, HANDOUT, REMOVED, HELD = "/student", "/handout", "/.removed", "/.held"
"""A copy's own working folder, where the submission's files are bound read-only, where
a copy keeps the replacement files of its question's own forbidden references, and where
folders that live under /tmp are held (a copy's fresh /tmp would hide them)."""

DEVICES = ("null", "zero", "full", "random", "urandom")
LIMITS = {"RLIMIT_AS": 8 << 30, "RLIMIT_FSIZE": 256 << 20, "RLIMIT_NOFILE": 1024,
          "RLIMIT_CORE": 0, "RLIMIT_NPROC": 256}
"""Per process of a copy: address space, file size, open files, core dumps, processes
(of the user ``nobody``; not set in a user namespace, where it would count the
instructor's own processes)."""
TMPFS_SIZE = {"/tmp": "256m", "/dev/shm": "64m", WORKDIR: "256m"}
CGROUP = {"memory": ("memory.limit_in_bytes", str(6 << 30)),
          "pids": ("pids.max", "512")}
"""Limits for a whole sandbox (template and every process of its copies), where the
machine has cgroup v1 controllers the grader may write."""


class IsolationError(RuntimeError):
    """The sandbox could not build its walls."""


# ----------------------------------------------------------------------------- the
# grader's side


@lru_cache(maxsize=None)
def isolation_mode() -> str | None:
    """``"root"`` (namespaces, then the user ``nobody``), ``"user"`` (a user namespace:
    the grader is not root) or None (this machine allows neither)."""
    if shutil.which("unshare") is None or not sys.platform.startswith("linux"):
        return None
    for mode, extra in (("root", []), ("user", ["--user", "--map-root-user"])):
        if mode == "root" and os.geteuid() != 0:
            continue
        try:
            done = subprocess.run(["unshare", *extra, *NAMESPACES, "true"],
                                  capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return mode
    return None


def python_executable() -> str:
    """This Python, named by a path that holds no symbolic link to the environment (a
    virtual environment reached through a link would not be found in the sandbox's
    root, where only real paths are bound)."""
    real = os.path.join(os.path.realpath(sys.prefix), "bin",
                        os.path.basename(sys.executable))
    return real if os.path.exists(real) else sys.executable


def template_command(mode: str | None, python: list[str]) -> list[str]:
    """The command line that starts the template ``python`` inside its namespaces."""
    if mode is None:
        return python
    extra = ["--user", "--map-root-user"] if mode == "user" else []
    return ["unshare", *extra, *NAMESPACES, *python]


def make_cgroups(name: str) -> list[str]:
    """Create the sandbox's cgroups (where the grader may); their folders."""
    made = []
    for controller, (key, value) in CGROUP.items():
        base = Path("/sys/fs/cgroup", controller)
        if not (base / "cgroup.procs").is_file() or not os.access(base, os.W_OK):
            continue
        folder = base / name
        try:
            folder.mkdir(exist_ok=True)
            (folder / key).write_text(value)
        except OSError:
            continue
        made.append(str(folder))
    return made


def remove_cgroups(folders: list[str], wait: float = 10.0) -> list[str]:
    """Remove the sandbox's cgroups once its last process has left them (a killed
    process leaves a moment later); the folders that could not be removed."""
    import time

    deadline = time.monotonic() + wait
    left = list(folders)
    while left:
        for folder in list(left):
            try:
                os.rmdir(folder)
                left.remove(folder)
            except FileNotFoundError:
                left.remove(folder)
            except OSError:
                pass
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    return left


def _package_dir(module: str) -> str | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    if spec.submodule_search_locations:
        return os.path.realpath(list(spec.submodule_search_locations)[0])
    return os.path.realpath(os.path.dirname(spec.origin))


def read_only_paths(modules: list[str]) -> list[str]:
    """What the sandbox's root holds, read-only: the system's programs and libraries,
    Python and its environment, and the folders of ``modules`` (which may live outside
    the environment, as an editable install does)."""
    paths = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
             "/sys", sys.base_prefix, sys.prefix, sys.exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    for module in modules:
        found = _package_dir(module)
        if found:
            paths.add(found)
    real = sorted({os.path.realpath(p) for p in paths if os.path.exists(p)})
    kept: list[str] = []
    for path in real:                  # a folder inside one already bound adds nothing
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


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


def _message(dotted: str) -> str:
    return (f"{dotted} is a reference this assignment asks you to write yourself: it "
            "does not exist where the autograder runs your code")


def _raising_body(dotted: str, keep_docstring: ast.stmt | None) -> list[ast.stmt]:
    raise_it = ast.parse(
        "raise __import__('seqlearn_grading.sandbox', fromlist=['_'])"
        f".ForbiddenReference({_message(dotted)!r})").body
    return ([keep_docstring] if keep_docstring is not None else []) + raise_it


def _find_def(tree: ast.Module, qualname: str) -> ast.FunctionDef | None:
    body: list[ast.stmt] = tree.body
    parts = qualname.split(".")
    for position, part in enumerate(parts):
        last = position == len(parts) - 1
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if last else (ast.ClassDef,)
        found = [n for n in body if isinstance(n, kinds) and n.name == part]
        if not found:
            return None
        if last:
            return found[-1]
        body = found[-1].body
    return None


def strip_functions(dotted_names: list[str], folder: str
                    ) -> tuple[dict[str, str], list[str]]:
    """Copies of the source files that define the Python functions ``dotted_names``,
    with each such function's body replaced by a ``raise``, written under ``folder``.

    Returns ``({original: its replacement}, names left to remove in memory)``: a name
    that is not a Python function written in a source file (a built-in, say) is removed
    from memory after the import instead. The ``__pycache__`` folder next to each such
    file maps to ``""``: the sandbox hides it behind a read-only copy that lacks the
    replaced modules' bytecode, so that no cached bytecode of an original, written
    before or after the sandbox started, can be loaded, while the folder's other
    modules load from their bytecode (the folder is created here if it is missing).
    """
    by_file: dict[str, list[tuple[str, str]]] = {}
    in_memory: list[str] = []
    for dotted in dotted_names:
        found = _resolve(dotted)
        if found is None:
            continue
        target = inspect.unwrap(getattr(found[2], "__func__", found[2]))
        source = None
        if isinstance(target, types.FunctionType) and "<locals>" not in \
                target.__qualname__:
            try:
                source = inspect.getsourcefile(target)
            except TypeError:
                source = None
        if source is None or not os.path.isfile(source):
            in_memory.append(dotted)
            continue
        by_file.setdefault(os.path.realpath(source), []).append(
            (dotted, target.__qualname__))
    overlays: dict[str, str] = {}
    Path(folder).mkdir(parents=True, exist_ok=True)
    for number, (source, wanted) in enumerate(sorted(by_file.items())):
        tree = ast.parse(Path(source).read_text(), filename=source)
        for dotted, qualname in wanted:
            node = _find_def(tree, qualname)
            if node is None:
                in_memory.append(dotted)
                continue
            first = node.body[0] if node.body else None
            docstring = first if isinstance(first, ast.Expr) and isinstance(
                getattr(first, "value", None), ast.Constant) and isinstance(
                first.value.value, str) else None
            node.body = _raising_body(dotted, docstring)
        replacement = Path(folder, f"{number}-{Path(source).name}")
        replacement.write_text(ast.unparse(ast.fix_missing_locations(tree)) + "\n")
        overlays[source] = str(replacement)
        cache = Path(source).parent / "__pycache__"
        try:
            cache.mkdir(exist_ok=True)
        except OSError as error:
            raise IsolationError(f"cannot create {cache} to hide it "
                                 f"({error})") from None
        overlays[str(cache.resolve())] = ""
    return overlays, in_memory


# ----------------------------------------------------------------------------- the
# sandbox's side

_libc: Any = None


def _c() -> Any:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                ctypes.c_ulong, ctypes.c_char_p]
        _libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return _libc


def _b(text: str | None) -> bytes | None:
    return None if text is None else os.fsencode(text)


def _mount(source: str | None, target: str, kind: str | None, flags: int,
           data: str | None = None) -> None:
    if _c().mount(_b(source), _b(target), _b(kind), flags, _b(data)) != 0:
        number = ctypes.get_errno()
        raise IsolationError(f"mount {source} on {target} ({kind}, {flags:#x}): "
                             f"{os.strerror(number)}")


def _locked_flags(path: str) -> int:
    """The flags of the mount that holds ``path``, which a read-only remount must
    keep."""
    found = os.statvfs(path).f_flag
    flags = 0
    for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV),
                   (os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, MS_NOATIME),
                   (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME)):
        if found & st:
            flags |= ms
    return flags


def _bind(source: str, target: str, *, read_only: bool = True) -> None:
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "a").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    if read_only:
        _mount(None, target, None,
               MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(target))


def _tmpfs(target: str, size: str, mode: str = "1777", owner: int | None = None
           ) -> None:
    os.makedirs(target, exist_ok=True)
    options = f"mode={mode},size={size}"
    if owner is not None:
        options += f",uid={owner},gid={owner}"
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)


def _hide(folder: str, keep: dict[str, bytes] | None = None) -> None:
    """Mount a read-only folder over ``folder``: empty, or holding the files ``keep``
    ({name: content})."""
    pages = sum(-(-len(data) // 4096) for data in (keep or {}).values())
    _tmpfs(folder, f"{4 * pages + 64}k", mode="755")
    for name, data in (keep or {}).items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
    _mount(None, folder, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _bytecode_to_keep(cache: str, replaced: set[str]) -> dict[str, bytes]:
    """The bytecode files of the ``__pycache__`` folder ``cache`` as they are now, but
    for those of the modules ``replaced`` (``NAME.*``): Python loads the replaced
    modules from their replacements' source and every other module of the folder from
    its bytecode, without compiling it again."""
    keep = {}
    for name in os.listdir(cache) if os.path.isdir(cache) else []:
        path = os.path.join(cache, name)
        if name.endswith(".pyc") and name.split(".")[0] not in replaced and \
                os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                keep[name] = f.read()
    return keep


def enter_root(setup: dict[str, Any]) -> None:
    """In the template, before any import: build the sandbox's root and move into it.

    ``setup`` holds ``root`` (an empty folder of the grader's), ``read_only`` (folders
    to bind), ``overlays`` ({file: replacement}) and ``handout`` (the submission's
    files).
    """
    root = setup["root"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)     # nothing here reaches the host
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=16m")
    _tmpfs(root + "/tmp", TMPFS_SIZE["/tmp"])
    # A folder under /tmp (a clone in a temporary folder, its .venv) is bound at a
    # holding place first and from there into /tmp, here and in every copy's fresh /tmp.
    held: dict[str, str] = {}
    where: dict[str, str] = {}
    for number, path in enumerate(setup["read_only"]):
        if path.startswith("/tmp/"):
            held[path] = where[path] = f"{HELD}/{number}"
        else:
            where[path] = path
        _bind(path, root + where[path])

    def inside(original: str) -> str:
        for path, place in where.items():
            if original == path or original.startswith(path.rstrip("/") + "/"):
                return root + place + original[len(path):]
        return root + original

    replaced: dict[str, set[str]] = {}           # __pycache__ -> its modules replaced
    for original, replacement in setup["overlays"].items():
        if replacement:
            folder, name = os.path.split(os.path.realpath(original))
            replaced.setdefault(os.path.join(folder, "__pycache__"), set()).add(
                name.split(".")[0])
    for original, replacement in setup["overlays"].items():
        if replacement == "":                    # a __pycache__ folder: a copy of it
            # without the replaced modules' bytecode, written before or after now
            cache = inside(original)
            _hide(cache, _bytecode_to_keep(
                cache, replaced.get(os.path.realpath(original), set())))
        elif os.path.exists(inside(original)):
            _bind(replacement, inside(original))
    for path, place in held.items():             # with the replacements above
        _bind(root + place, root + path)
    setup["held"] = held
    _bind(setup["handout"], root + HANDOUT)
    _tmpfs(root + "/dev", "1m", mode="755")
    for device in DEVICES:
        if os.path.exists(f"/dev/{device}"):
            _bind(f"/dev/{device}", f"{root}/dev/{device}", read_only=False)
    os.makedirs(root + "/dev/shm", exist_ok=True)
    os.makedirs(root + WORKDIR, exist_ok=True)
    os.makedirs(root + REMOVED, exist_ok=True)
    os.makedirs(root + "/proc", exist_ok=True)
    try:
        _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except IsolationError:
        if setup["mode"] == "root":
            raise
        # A user namespace may not mount a proc while the host's is partly hidden:
        # the sandbox then has no /proc at all.
    old = root + "/.old-root"
    os.makedirs(old, exist_ok=True)
    number = PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise IsolationError(f"no pivot_root for {platform.machine()}")
    if _c().syscall(number, _b(root), _b(old)) != 0:
        raise IsolationError(f"pivot_root: {os.strerror(ctypes.get_errno())}")
    os.chdir("/")
    if _c().umount2(b"/.old-root", MNT_DETACH) != 0:
        raise IsolationError(f"umount old root: {os.strerror(ctypes.get_errno())}")
    os.rmdir("/.old-root")
    _mount(None, "/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None)
    os.environ.update(HOME=WORKDIR, TMPDIR="/tmp", MPLCONFIGDIR="/tmp")


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


def remove_in_memory(dotted_names: list[str]) -> int:
    """Replace each of ``dotted_names`` (built-ins and other objects that have no
    source file) by a function that raises, under every name any loaded module gives
    it. Returns how many were found."""
    from seqlearn_grading.sandbox import ForbiddenReference

    found = 0
    for dotted in dotted_names:
        located = _resolve(dotted)
        if located is None:
            continue
        found += 1
        original = located[2]
        message = _message(dotted)

        def forbidden(*args: Any, _message: str = message, **kwargs: Any) -> Any:
            raise ForbiddenReference(_message)

        target = getattr(original, "__func__", original)
        if isinstance(target, types.FunctionType):
            # Every name of this function object raises from now on; its original
            # code is no longer referenced by anything.
            target.__code__ = _raiser_code(len(target.__code__.co_freevars), message)
            target.__globals__.setdefault("_Forbidden", ForbiddenReference)
            continue
        for module in list(sys.modules.values()):
            try:
                names = [k for k, v in vars(module).items() if v is original]
            except TypeError:
                continue
            for name in names:
                try:
                    setattr(module, name, forbidden)
                except (AttributeError, TypeError):
                    pass
        try:
            setattr(located[0], located[1], forbidden)
        except (AttributeError, TypeError):
            pass
    return found


def confine_copy(setup: dict[str, Any], overlays: dict[str, bytes | None]) -> None:
    """In a freshly forked copy, before any student code: a mount namespace of its own
    with empty /tmp, /dev/shm and working folder (a copy of the submission's files),
    this question's own replaced files (``{original: its replacement's bytes}``, None
    for a ``__pycache__`` folder to hide), resource limits, then no privileges at
    all."""
    import resource

    mode = setup["mode"]
    owner = NOBODY if mode == "root" else None
    if _c().unshare(CLONE_NEWNS) != 0:
        raise IsolationError(f"unshare: {os.strerror(ctypes.get_errno())}")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _tmpfs("/tmp", TMPFS_SIZE["/tmp"])
    for path, place in setup.get("held", {}).items():   # what lives under /tmp
        _bind(place, path)
    _tmpfs("/dev/shm", TMPFS_SIZE["/dev/shm"])
    _tmpfs(WORKDIR, TMPFS_SIZE[WORKDIR], mode="700", owner=owner)
    for item in os.listdir(HANDOUT):
        source, target = os.path.join(HANDOUT, item), os.path.join(WORKDIR, item)
        if os.path.isdir(source):
            shutil.copytree(source, target, symlinks=True)
        elif os.path.isfile(source):
            shutil.copy(source, target)
    if owner is not None:
        for folder, dirs, files in os.walk(WORKDIR):
            for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.lchown(name, owner, owner)
    if overlays:
        _tmpfs(REMOVED, "64m", mode="755")
        for number, (original, content) in enumerate(sorted(overlays.items())):
            if content is None:
                _hide(original)
            elif os.path.exists(original):
                replacement = os.path.join(REMOVED, str(number))
                Path(replacement).write_bytes(content)
                _bind(replacement, original)
        _mount(None, REMOVED, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(WORKDIR)
    try:
        Path("/proc/self/oom_score_adj").write_text("1000")   # killed before the rest
    except OSError:
        pass
    for name, value in LIMITS.items():
        if name == "RLIMIT_NPROC" and mode != "root":
            continue
        limit = getattr(resource, name)
        soft, hard = resource.getrlimit(limit)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(limit, (value, value))
    drop_privileges(owner)


def drop_privileges(owner: int | None) -> None:
    """Become ``owner`` (as root) and keep no capability, now or after an exec."""
    libc = _c()
    for capability in range(64):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0 and \
                ctypes.get_errno() == errno.EINVAL:
            break
    libc.prctl(PR_CAP_AMBIENT, 4, 0, 0, 0)                # clear every ambient one
    if owner is not None:
        os.setgroups([])
        os.setresgid(owner, owner, owner)
        os.setresuid(owner, owner, owner)
    else:
        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                        ("inheritable", ctypes.c_uint32)]

        header, data = Header(0x20080522, 0), (Data * 2)()
        if libc.capset(ctypes.byref(header), data) != 0:
            raise IsolationError(f"capset: {os.strerror(ctypes.get_errno())}")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise IsolationError("no_new_privs could not be set")


def kill_all_but_me() -> dict[int, int]:
    """As process 1 of the namespace: SIGKILL every other process and reap them all;
    ``{pid: exit code}`` of those reaped."""
    import signal
    import time

    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    codes: dict[int, int] = {}
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.002)
        else:
            codes[pid] = os.waitstatus_to_exitcode(status)
    return codes
