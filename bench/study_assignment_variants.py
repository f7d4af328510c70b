"""Do the training answers of the assignment gallery learn the autograder's variants?

The hidden tests of two training questions grade the method on a task the handout does
not show: ``train_echo`` (recurrence q5) on an echo of delay 1 with either sign (the
handout's has delay 2, sign +1), ``train_memory`` (gating q5) on y = a x_0 + b with
(a, b) one of (-1, 0), (-1, 0.5), (1, 0.5), (1, -0.5) (the handout's: the first input
x_0 itself). This study runs every answer of the gallery that deserves the points (the
model answers, and for train_echo "correct written differently"; gating's gallery has no
other) on every variant, for several seeds, with the hidden test's own data sizes, and
prints each held-out error against the test's threshold. It also runs the shift register
set by hand (tests/assignments/attacks.py), which deserves nothing: it must fail every
variant, while it passes the handout's own task.

    .venv/bin/python bench/study_assignment_variants.py [--seeds 5]

Needs ``make assignments`` (it reads the model answers from the autograder notebooks).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "assignments"), str(ROOT / "tests"),
                str(ROOT / "tools" / "grading")]

import attacks  # noqa: E402
import gallery  # noqa: E402
from seqlearn_grading.notebook import model_answers  # noqa: E402


def answers(name: str) -> dict[str, str]:
    """Every model answer of assignment ``name``, with its imports, as one source."""
    import nbformat

    nb = nbformat.read(ROOT / "_build" / "assignments" / name / "autograder" /
                       f"{name}.ipynb", as_version=4)
    imports, definitions = model_answers(nb)
    return {"imports": "\n".join(imports),
            "sources": "\n\n".join(dict.fromkeys(definitions.values()))}


def namespace(name: str, replaced: str | None = None) -> dict:
    found = answers(name)
    scope: dict = {}
    exec(found["imports"], scope)
    exec(found["sources"], scope)
    if replaced:
        exec(replaced, scope)
    return scope


def echo_error(train_echo, delay: int, sign: float, seed: int) -> float:
    from seqlearn.bptt import rnn_forward

    rng = np.random.default_rng(seed)

    def echo(n, T):
        x = rng.standard_normal((n, T, 1))
        y = np.zeros_like(x)
        y[:, delay:] = sign * x[:, :-delay]
        return x, y

    x, y = echo(2000, 12)
    params = train_echo(x, y, np.random.default_rng(seed + 1))
    H = params["W11"].shape[0]
    x_test, y_test = echo(500, 20)
    y_pred, _ = rnn_forward(x_test, np.zeros((500, H)), params)
    return float(np.mean((y_pred[:, delay:] - y_test[:, delay:]) ** 2))


def memory_error(train_memory, a: float, b: float, seed: int) -> float:
    from seqlearn.gated import GRUCell

    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(2000, 30, 1, generator=gen)
    w = train_memory(x, a * x[:, 0] + b, seed + 1)
    w = {k: torch.as_tensor(v).detach().double() for k, v in w.items()}
    H = w["weight_hh"].shape[-1]
    cell = GRUCell(1, H, reset="before").double()
    x_test = torch.randn(500, 30, 1, generator=gen, dtype=torch.float64)
    with torch.no_grad():
        for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, k).copy_(w[k])
        h = torch.zeros(500, H, dtype=torch.float64)
        for t in range(30):
            h = cell(x_test[:, t], h)
        out = h @ w["W_out"].T + w["b_out"]
    return float(((out - (a * x_test[:, 0] + b)) ** 2).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    seeds = [1000 + 17 * s for s in range(args.seeds)]
    failures = []
    echo = {"model answer": namespace("recurrence"),
            "written differently": namespace(
                "recurrence", gallery.R_DIFFERENT["q5"]),
            "set by hand (attack)": namespace("recurrence", attacks.HAND_SET)}
    for label, scope in echo.items():
        for delay, sign in ((2, 1.0), (1, 1.0), (1, -1.0)):
            begun = time.monotonic()
            errors = [echo_error(scope["train_echo"], delay, sign, s) for s in seeds]
            handout = (delay, sign) == (2, 1.0)
            note = " [handout task]" * handout
            print(f"train_echo  {label:22s} delay {delay} sign {sign:+.0f}: largest "
                  f"error {max(errors):.4f} (threshold 0.1){note}"
                  f"  {time.monotonic() - begun:.1f} s", flush=True)
            should_pass = "attack" not in label or handout
            if should_pass != (max(errors) <= 0.1 if should_pass else
                               min(errors) <= 0.1):
                failures.append((label, delay, sign, errors))
    memory = {"model answer": namespace("gating")}
    for label, scope in memory.items():
        for a, b in ((-1.0, 0.0), (-1.0, 0.5), (1.0, 0.5), (1.0, -0.5)):
            begun = time.monotonic()
            errors = [memory_error(scope["train_memory"], a, b, s) for s in seeds]
            print(f"train_memory {label:21s} a {a:+.0f} b {b:+.1f}: largest "
                  f"error {max(errors):.4f} (threshold 0.05)  "
                  f"{time.monotonic() - begun:.1f} s", flush=True)
            if max(errors) > 0.05:
                failures.append((label, a, b, errors))
    if failures:
        raise SystemExit(f"answers that do not score what they deserve: {failures}")
    print(f"every answer scores what it deserves on every variant, {len(seeds)} seeds")


if __name__ == "__main__":
    main()
