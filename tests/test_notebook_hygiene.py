"""Every chapter notebook is listed in the table of contents, stored from one clean run, and small.

nbval (``make test-notebooks``) re-executes the chapters and compares outputs; these checks catch
what it cannot: stale or out-of-order stored outputs, warnings, errors, size, and check cells that
do not check anything.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from layout import ROOT, chapter_notebooks, toc_files

NOTEBOOKS = chapter_notebooks()
MAX_BYTES = 2 * 1024 * 1024
ASSERTING = re.compile(r"\bassert\b|assert_close|assert_allclose|assert_array_equal|pytest\.raises|raise\s+AssertionError")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_there_are_chapters():
    assert NOTEBOOKS, "chapters/ holds no notebook"


def test_toc_and_chapters_agree():
    listed = {f for f in toc_files() if f.startswith("chapters/")}
    present = {f"chapters/{p.stem}" for p in NOTEBOOKS}
    assert listed - present == set(), f"_toc.yml lists missing chapters: {sorted(listed - present)}"
    assert present - listed == set(), f"chapters missing from _toc.yml: {sorted(present - listed)}"
    for entry in toc_files():
        assert any((ROOT / f"{entry}{ext}").exists() for ext in (".md", ".ipynb")), entry


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_come_from_one_clean_run(path: Path):
    code = [c for c in cells(path) if c["cell_type"] == "code" and source(c).strip()]
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name}: execution counts {counts} are not 1, 2, 3, ...; restart, run all, save")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_errors_or_warnings_in_outputs(path: Path):
    for index, cell in enumerate(cells(path)):
        for output in cell.get("outputs", []):
            assert output["output_type"] != "error", f"{path.name} cell {index}: stored error"
            if output["output_type"] == "stream":
                assert output["name"] != "stderr", (
                    f"{path.name} cell {index}: output on stderr: {''.join(output['text'])[:200]}")
            text = json.dumps(output.get("data", {}).get("text/plain", ""))
            assert not re.search(r" at 0x[0-9a-f]{6,}", text), f"{path.name} cell {index}: memory address"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_timing_metadata(path: Path):
    """Execution timestamps make every re-run a diff; run nbconvert with record_timing=False."""
    timed = [i for i, c in enumerate(cells(path)) if "execution" in c.get("metadata", {})]
    assert timed == [], f"{path.name}: cells {timed} store execution timings"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_small(path: Path):
    assert path.stat().st_size < MAX_BYTES, f"{path.name} is {path.stat().st_size} bytes"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_kernel_is_python3(path: Path):
    spec = json.loads(path.read_text())["metadata"].get("kernelspec", {})
    assert spec.get("name") == "python3", f"{path.name}: kernelspec {spec}"


ANNOUNCED = re.compile(r"\*\*(Check|Demonstration):\*\*")

# A cell trains when it calls a training loop (fit, fit_seq2seq, train_recall, a local
# train(...)) or an optimiser (torch.optim, optimizer.step()).
TRAINS = re.compile(r"(?<![\w.])(fit|fit_\w+|train|train_\w+)\(|torch\.optim\.|"
                    r"(?<![\w.])optim\.\w+\(|\.step\(\)")
#: nbval's cell tag: run the cell, do not compare its output (CONTRIBUTING: two kinds of
#: output)
UNCOMPARED = "nbval-ignore-output"
HEADING = re.compile(r"^#{1,6} ", re.M)


def test_the_training_detector_sees_training_and_not_its_look_alikes():
    for trains in ("model = fit(model, batches, 200)", "fit_seq2seq(m, b, 5)",
                   "train_recall(seed=1)", "opt = torch.optim.Adam(p)", "opt.step()",
                   "optimizer = optim.SGD(p, lr=1)", "def train(seed):\n    ..."):
        assert TRAINS.search(trains), trains
    for not_training in ("ngram.fit_counts", "model.fit(text)", "x.train()",
                         "print(inspect.getsource(fit))", "scheduler.step(3)",
                         "pretrain(3)", "trained = 1"):
        assert not TRAINS.search(not_training), not_training


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_training_cells_are_not_compared_digit_by_digit(path: Path):
    """Outputs downstream of training differ from CPU to CPU and Python to Python:
    a cell that trains carries the nbval-ignore-output tag (nbval runs it but does not
    compare its output), and its claim is asserted with a margin in that cell or a later
    cell of the same section."""
    nb = cells(path)
    compared = [i for i, c in enumerate(nb) if c["cell_type"] == "code"
                and TRAINS.search(source(c)) and c.get("outputs")
                and UNCOMPARED not in c["metadata"].get("tags", [])]
    assert compared == [], (f"{path.name}: cells {compared} train and nbval compares "
                            f"their output; tag them {UNCOMPARED} and assert the claim")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_uncompared_cell_is_guarded_by_an_assertion(path: Path):
    """An output nbval does not compare is checked another way: the cell itself, or a
    later code cell before the next heading, asserts."""
    nb = cells(path)
    unguarded = []
    for index, cell in enumerate(nb):
        if UNCOMPARED not in cell["metadata"].get("tags", []):
            continue
        guarded = False
        for later in nb[index:]:
            if later["cell_type"] == "markdown" and HEADING.search(source(later)):
                break
            if later["cell_type"] == "code" and ASSERTING.search(source(later)):
                guarded = True
                break
        if not guarded:
            unguarded.append(index)
    assert unguarded == [], (f"{path.name}: cells {unguarded} are not compared by nbval "
                             "and no assertion follows them in their section")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_check_cell_asserts(path: Path):
    """A markdown cell announcing a **Check:** (or a **Demonstration:**, an identity by
    construction or a hand-set example) is followed by a code cell that asserts."""
    nb = cells(path)
    announced = 0
    for index, cell in enumerate(nb):
        if cell["cell_type"] == "markdown" and ANNOUNCED.search(source(cell)):
            announced += 1
            following = next((c for c in nb[index + 1:] if c["cell_type"] == "code"), None)
            assert following is not None and ASSERTING.search(source(following)), (
                f"{path.name}: the check announced in cell {index} is not followed by an asserting cell")
    assert announced >= 3, f"{path.name} announces only {announced} check cells"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_asserting_cell_is_announced(path: Path):
    """The reader learns what a cell proves before it runs: a **Check:** (or
    **Demonstration:**) line comes right before."""
    nb = cells(path)
    silent = [i for i, c in enumerate(nb) if c["cell_type"] == "code" and ASSERTING.search(source(c))
              and not (i > 0 and nb[i - 1]["cell_type"] == "markdown"
                       and ANNOUNCED.search(source(nb[i - 1])))]
    assert silent == [], (f"{path.name}: asserting cells {silent} have no **Check:** or "
                          "**Demonstration:** line right before them")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_check_hides_in_a_hidden_cell(path: Path):
    """Readers of the HTML book must see every assertion: none sits in a hide-input cell."""
    hidden = [i for i, c in enumerate(cells(path)) if c["cell_type"] == "code"
              and "hide-input" in c["metadata"].get("tags", []) and ASSERTING.search(source(c))]
    assert hidden == [], f"{path.name}: cells {hidden} assert inside hide-input; show the check"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_chapter_has_exercises_with_collapsed_solutions(path: Path):
    text = "\n".join(source(c) for c in cells(path) if c["cell_type"] == "markdown")
    assert re.search(r"^#+ .*Exercises", text, re.M), f"{path.name} has no Exercises section"
    assert ":::{dropdown} Solution\n" in text, f"{path.name} has no folded solution"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_chapter_has_an_interactive_demo(path: Path):
    """A FrameSlider (works in static HTML) and its live version in a cell hidden from the book."""
    nb = cells(path)
    assert any("FrameSlider(" in source(c) for c in nb if c["cell_type"] == "code"), path.name
    live = [c for c in nb if c["cell_type"] == "code" and ".live(" in source(c)]
    assert live, f"{path.name} has no live demo cell"
    for cell in live:
        assert "remove-output" in cell["metadata"].get("tags", []), f"{path.name}: tag the live cell remove-output"
