"""Every chapter has a main line a student reads in one sitting, and ends like a textbook chapter.

The main line is the Markdown before the chapter's ``## Going further`` heading (what a curious
reader wants and a student may skip comes after it), or before ``## References`` where a chapter
has no Going further. It holds at most ``MAX_WORDS`` words of prose (markup, and the solutions a
student unfolds after trying an exercise, do not count), and it ends with a ``## Summary`` and an
``## Exercises`` section: four to six exercises, each with its solution folded in a
``:::{dropdown} Solution`` block.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from layout import chapter_notebooks

MAX_WORDS = 4500
GOING_FURTHER = re.compile(r"^## (Going further|References)\b", re.MULTILINE)
SOLUTION = re.compile(r"^:::\{dropdown\}.*?^:::$", re.MULTILINE | re.DOTALL)
ALERT = re.compile(r"^> \[!\w+\]$", re.MULTILINE)  # a box's kind: markup, not prose
NOTEBOOKS = chapter_notebooks()


def _cells(path: Path) -> list[dict]:
    cells = json.loads(path.read_text())["cells"]
    for c in cells:
        c["text"] = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
    return cells


def main_line(path: Path) -> list[dict]:
    """The cells before ``## Going further`` or ``## References`` (all if neither)."""
    cells = _cells(path)
    for i, c in enumerate(cells):
        if c["cell_type"] == "markdown" and GOING_FURTHER.search(c["text"]):
            return cells[:i]
    return cells


def words(text: str) -> int:
    """Words a reader reads: whitespace-separated tokens; HTML tags and comments, alert
    markers and folded solutions left out. (A tag starts with a letter or ``/``: a ``<`` in
    maths is not one.)"""
    text = SOLUTION.sub(" ", ALERT.sub(" ", text))
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.DOTALL)
    text = re.sub(r"</?[A-Za-z][^>]*>", " ", text)
    return len(text.split())


def main_line_words(path: Path) -> int:
    return sum(words(c["text"]) for c in main_line(path) if c["cell_type"] == "markdown")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_main_line_is_short(path):
    n = main_line_words(path)
    assert n <= MAX_WORDS, (
        f"{path.name}: the main line (Markdown before '## Going further') has {n} words, "
        f"more than {MAX_WORDS}: move what a student may skip into Going further")


def _section(cells: list[dict], heading: str) -> str:
    text = "\n".join(c["text"] for c in cells if c["cell_type"] == "markdown")
    match = re.search(rf"^## {heading}\b.*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    return match.group(0) if match else ""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_summary_and_exercises_close_the_main_line(path):
    cells = main_line(path)
    assert _section(cells, "Summary"), f"{path.name}: no '## Summary' section in the main line"
    exercises = _section(cells, "Exercises")
    assert exercises, f"{path.name}: no '## Exercises' section in the main line"
    numbered = re.findall(r"^\s*(?:\*\*)?(\d+)\.\s", exercises, re.MULTILINE)
    count = len(set(numbered))
    assert 4 <= count <= 6, f"{path.name}: {count} exercises, expected 4 to 6"
    assert exercises.count(":::{dropdown} Solution") >= count, (
        f"{path.name}: every exercise needs its solution folded in :::{{dropdown}} Solution")
    index = next(i for i, c in enumerate(cells)
                 if c["cell_type"] == "markdown" and re.search(r"^## Exercises", c["text"],
                                                               re.MULTILINE))
    executed = [c for c in cells[index:] if c["cell_type"] == "code"]
    assert not executed, f"{path.name}: a code cell sits among the exercises"


# Parts III-V draw every architecture before its equations (seqlearn.diagrams), in cells
# tagged "architecture" whose output is an image with alt text in every renderer.
ARCHITECTURES = {
    "seq2seq": ["seq2seq_diagram"],
    "attention": ["bahdanau_step_diagram", "attention_readout_diagram"],
    "self_attention": ["multi_head_diagram", "mask_diagram"],
    "transformer": ["transformer_diagram", "norm_placement_diagram(layer=\"encoder\")",
                    "norm_placement_diagram(layer=\"decoder\")"],
    "memory_networks": ["memn2n_diagram"],
    "ntm": ["ntm_diagram"],
    "language_model": ["char_lm_diagram(\"teacher\")", "char_lm_diagram(\"sampling\")"],
}
ALT = re.compile(r'<img alt="([^"]{40,})" src="data:image/png;base64,')


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_architecture_figures_with_alt_text(name):
    path = next(p for p in NOTEBOOKS if p.stem == name)
    figures = [c for c in main_line(path)
               if c["cell_type"] == "code" and "architecture" in c["metadata"].get("tags", [])]
    drawn = "\n".join(c["text"] for c in figures)
    missing = [f for f in ARCHITECTURES[name] if f"diagrams.{f}" not in drawn]
    assert missing == [], f"{path.name}: no architecture figure cell draws {missing}"
    for cell in figures:
        html = "".join("".join(o.get("data", {}).get("text/html", ""))
                       for o in cell.get("outputs", []))
        assert ALT.search(html), (
            f"{path.name}: architecture cell {cell['id']} shows no image with alt text")
