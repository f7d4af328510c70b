"""Chapters are written in Markdown that the book, JupyterLab, Colab and GitHub all render.

See CONTRIBUTING.md ("Write Markdown that every reader's renderer understands"). The browser
tests in tests/book/ render the chapters in JupyterLab and with nbconvert; these checks name the
offending line directly, and run in a second.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from layout import ROOT, chapter_notebooks, markdown_of

NOTEBOOKS = chapter_notebooks()
PAGES = NOTEBOOKS + sorted((ROOT / "appendix").glob("*.ipynb"))  # every notebook the book shows
MAX_CODE_LINE = 88
DIRECTIVE = re.compile(r"^\s*(`{3,}|:{3,})\s*\{([\w-]+)\}", re.M)
ALLOWED_DIRECTIVES = {"dropdown"}  # a solution: JupyterLab and the book fold it
TARGET = re.compile(r"^\([\w-]+\)=\s*$", re.M)
ROLE = re.compile(r"\{([\w:-]+)\}`")
ALLOWED_ROLES = {"eq", "cite"}
MATHS = re.compile(r"\$\$.*?\$\$|\$(?:\\\$|[^$])+?\$", re.S)
LIST_OR_HEADING = re.compile(r"^\s*([-+*]\s|#)")
FORMER_MACROS = re.compile(r"\\(vx|vh|vy|vc|vq|vk|vv|mW|mU|softmax|diag|htilde|R)(?![A-Za-z])")
SEED_JARGON = re.compile(r"\b[Ss]eeds? 0\d\d\b|\bseed 00\d")
SOLUTION = re.compile(r"^:::\{dropdown\} Solution\n\n(?:(?!^:::).)+?\n\n:::$", re.S | re.M)
FENCE = re.compile(r"^:::", re.M)
QUOTE = re.compile(r"(?:^>.*\n?)+", re.M)  # a block quote: consecutive lines starting ">"
BOX = re.compile(r"^> \*\*(Erratum|Note|Convention)\b", re.M)
ALERT = re.compile(r"> \[!(NOTE|WARNING)\]\n")
BOX_KIND = {"Erratum": "WARNING", "Note": "NOTE", "Convention": "NOTE"}


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def repository_url() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def maths_lines(markdown: str) -> list[str]:
    """Every line of maths that is not its first line (where a Markdown block could start)."""
    return [line for m in MATHS.finditer(markdown) for line in m.group(0).split("\n")[1:]]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_no_myst_only_syntax(path: Path):
    for index, text in enumerate(markdown_of(path)):
        where = f"{path.name}, Markdown cell {index}"
        fences = {m.group(2) for m in DIRECTIVE.finditer(text)} - ALLOWED_DIRECTIVES
        assert not fences, f"{where}: directive fences {fences} (plain renderers show them "\
            "as code): use $$ ... $$ (label), a GitHub alert or :::{dropdown} Solution"
        assert not TARGET.search(text), f"{where}: a (label)= target; link to a heading instead"
        roles = set(ROLE.findall(text)) - ALLOWED_ROLES
        assert not roles, f"{where}: roles {roles}; use a Markdown link to the notebook"
        macros = FORMER_MACROS.findall(text)
        assert not macros, f"{where}: MathJax macros {macros}: spell them out"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_no_maths_line_reads_as_a_list_or_heading(path: Path):
    for index, text in enumerate(markdown_of(path)):
        bad = [line for line in maths_lines(text) if LIST_OR_HEADING.match(line)]
        assert bad == [], (f"{path.name}, Markdown cell {index}: maths lines that Markdown "
                           f"reads as a list item or heading: {bad}")


def test_maths_line_rule_catches_a_plus_at_line_start():
    assert maths_lines("so $a\n+ b$ and $$\nx\n- y\n$$") == ["+ b$", "x", "- y", "$$"]
    assert [l for l in maths_lines("$a +\nb$") if LIST_OR_HEADING.match(l)] == []


def solutions(text: str) -> int:
    """How many solutions a Markdown cell holds; fails unless every ``:::`` fence belongs to
    one written as ``:::{dropdown} Solution``, a blank line, the solution, a blank line and
    ``:::``."""
    found = len(SOLUTION.findall(text))
    assert len(FENCE.findall(text)) == 2 * found, (
        "write each solution as ':::{dropdown} Solution', a blank line, the solution, a "
        f"blank line and ':::' (no other fence inside):\n{text[:300]}")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_solutions_fold(path: Path):
    markdown = markdown_of(path)
    assert sum(solutions(text) for text in markdown) > 0, f"{path.name} has no solution"
    assert not any("<details>" in text for text in markdown), (
        f"{path.name}: a <details> solution; JupyterLab would show its maths as raw LaTeX")


def test_solution_rule_catches_a_bad_fence():
    assert solutions(":::{dropdown} Solution\n\n$x$\n\n:::") == 1
    for bad in (":::{dropdown} Solution\n$x$\n:::", ":::{dropdown} Hint\n\nx\n\n:::",
                ":::{dropdown} Solution\n\nx\n\n:::{note}\ny\n:::\n\n:::"):
        with pytest.raises(AssertionError):
            solutions(bad)


def boxes(text: str) -> list[tuple[str, str | None]]:
    """(kind word, alert kind or None) of every block quote that opens with a bold box word
    on its first line or, after an alert line, on its second."""
    found = []
    for quote in QUOTE.findall(text):
        alert = ALERT.match(quote)
        body = quote[alert.end():] if alert else quote
        box = BOX.match(body)
        if box:
            found.append((box.group(1), alert.group(1) if alert else None))
    return found


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_boxes_are_alerts(path: Path):
    """Every Erratum, Note or Convention box is a GitHub alert of its kind, which GitHub and
    JupyterLab show as a coloured box and the book as an admonition (_ext)."""
    wrong = [(word, alert) for text in markdown_of(path) for word, alert in boxes(text)
             if alert != BOX_KIND[word]]
    assert wrong == [], (f"{path.name}: boxes without their alert line (Erratum: "
                         f"'> [!WARNING]', Note and Convention: '> [!NOTE]'): {wrong}")


def test_box_rule_catches_a_missing_alert():
    assert boxes("> [!WARNING]\n> **Erratum (x): y.** z\n\n> **Note.** a\n> b") == [
        ("Erratum", "WARNING"), ("Note", None)]
    assert boxes("> [!NOTE]\n> **Erratum (x).** y") == [("Erratum", "NOTE")]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_code_lines_fit(path: Path):
    long = [(i, line) for i, c in enumerate(cells(path)) if c["cell_type"] == "code"
            for line in source(c).splitlines() if len(line) > MAX_CODE_LINE]
    assert long == [], f"{path.name}: code lines over {MAX_CODE_LINE} characters: {long[:5]}"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_sources_are_named_not_numbered(path: Path):
    found = [m.group(0) for c in cells(path) for m in SEED_JARGON.finditer(source(c))]
    assert found == [], (f"{path.name}: {found}; call the source notes by name "
                         "(CONTRIBUTING.md), e.g. 'the CMU 11-785 notes'")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_colab_install_cell(path: Path):
    """The second cell installs seqlearn on Colab only, and the book does not show it."""
    cell = cells(path)[1]
    text = source(cell)
    assert cell["cell_type"] == "code" and 'if "google.colab" in sys.modules:' in text, path.name
    assert "remove-cell" in cell["metadata"].get("tags", []), f"{path.name}: tag it remove-cell"
    assert f'REPOSITORY = "{repository_url()}"' in text, (
        f"{path.name}: the Colab cell must install from repository.url of _config.yml")
    assert cell.get("outputs") == [], f"{path.name}: the Colab cell printed something here"


def test_readme_names_where_the_book_and_repository_live():
    url = repository_url()
    owner, name = url.rstrip("/").split("/")[-2:]
    readme = (ROOT / "README.md").read_text()
    assert url in readme
    assert f"https://{owner}.github.io/{name}/" in readme
