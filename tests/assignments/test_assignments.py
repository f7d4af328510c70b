"""The graded assignments in assignments/: masters well formed, handouts safe, grades right.

Without running anything: every master notebook is in otter assign's format (configuration,
questions with points, public and hidden tests, solutions that leave a stub raising
NotImplementedError), its table of points agrees with its configuration, its Markdown reads in
every renderer, and the book has a page for it. After ``make assignments`` (fixtures in
``conftest.py``): the student version holds no solution text and no hidden test; run top to
bottom it fails only with NotImplementedError; ``otter run`` gives the solution notebook full
marks and the untouched student notebook zero.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from grading import master_names
from layout import ROOT, toc_files
from test_portable_markdown import (DIRECTIVE, FORMER_MACROS, LIST_OR_HEADING, MAX_CODE_LINE,
                                    ROLE, SEED_JARGON, TARGET, maths_lines)

NAMES = master_names()
MASTERS = ROOT / "assignments"
PAGES = MASTERS / "pages"


def master(name: str) -> nbformat.NotebookNode:
    return nbformat.read(MASTERS / f"{name}.ipynb", as_version=4)


def config(name: str) -> dict:
    first = master(name).cells[0]
    assert first.cell_type == "raw" and first.source.startswith("# ASSIGNMENT CONFIG"), (
        f"{name}: the first cell must be the raw # ASSIGNMENT CONFIG cell")
    return yaml.safe_load(first.source)


def questions(name: str) -> list[dict]:
    """Every question of a master: its configuration, test names, solution and prompt cells."""
    found, question, block = [], None, None
    for index, cell in enumerate(master(name).cells):
        text = cell.source
        if cell.cell_type == "raw" and text.startswith("# BEGIN QUESTION"):
            question = {**yaml.safe_load(text.split("\n", 1)[1]), "public": [], "hidden": [],
                        "solutions": [], "prompts": []}
            found.append(question)
        elif cell.cell_type == "raw" and text.startswith("# END QUESTION"):
            question = None
        elif cell.cell_type == "raw" and re.match(r"# (BEGIN|END) (SOLUTION|TESTS)", text):
            block = text.split()[2].lower() if text.startswith("# BEGIN") else None
        elif question is not None and block == "tests":
            name_of = re.search(r"^def (\w+)\(", text, re.M).group(1)
            hidden = text.splitlines()[0].strip().upper().startswith("# HIDDEN")
            question["hidden" if hidden else "public"].append(name_of)
        elif question is not None and block == "solution":
            question["solutions"].append((index, cell))
        elif question is not None and cell.cell_type == "markdown":
            question["prompts"].append(text)
    return found


def solution_lines(name: str) -> set[str]:
    """Lines that only the solutions of a master hold (a handout must show none of them).

    A solution is a Markdown cell of a solution block, or the lines of a code cell of a
    solution block between ``# BEGIN SOLUTION`` and ``# END SOLUTION``.
    """
    solutions = {index for q in questions(name) for index, _ in q["solutions"]}
    inside, elsewhere = set(), set()
    for index, cell in enumerate(master(name).cells):
        hiding = cell.cell_type == "markdown" and index in solutions
        for line in cell.source.splitlines():
            stripped = line.strip()
            if cell.cell_type == "code" and index in solutions:
                if "# BEGIN SOLUTION" in stripped or "# END SOLUTION" in stripped:
                    hiding = "# BEGIN" in stripped
                    continue
            (inside if hiding else elsewhere).add(stripped)
    return {line for line in inside - elsewhere if len(line) >= 12}


def handout_text(folder: Path) -> str:
    """Everything a folder shows as text: notebook cells and metadata (where otter keeps the
    tests), decoded from JSON, and every other text file."""
    parts = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            parts += [cell.source for cell in nb.cells]
            parts += [str(v) for v in nb.metadata.get("otter", {}).get("tests", {}).values()]
            parts.append(json.dumps(nb.metadata))
        elif path.suffix in (".py", ".txt", ".json", ".md", ".yml"):
            parts.append(path.read_text(errors="replace"))
    return "\n".join(parts)


# ----------------------------------------------------------------------------- without running


def test_there_are_five_assignments():
    assert NAMES == sorted(["recurrence", "gating", "attention", "transformer",
                            "gru_to_attention"]), NAMES


@pytest.mark.parametrize("name", NAMES)
def test_configuration(name):
    cfg = config(name)
    assert cfg["name"] == name, f"{name}: the configuration's name is {cfg['name']!r}"
    assert "checks.py" in cfg["files"], f"{name}: checks.py must be copied to the handout"
    assert cfg["tests"] == {"ok_format": False}, f"{name}: tests must be exception-based"
    assert cfg["requirements"] == "requirements.txt", name
    assert cfg["export_cell"]["pdf"] is False, f"{name}: a PDF export needs LaTeX"


@pytest.mark.parametrize("name", NAMES)
def test_questions_have_points_tests_and_stubs(name):
    found = questions(name)
    assert [q["name"] for q in found] == [f"q{i}" for i in range(1, len(found) + 1)], name
    for q in found:
        where = f"{name} {q['name']}"
        assert q.get("points", 0) > 0, f"{where}: no points"
        assert q["prompts"], f"{where}: no prompt"
        assert q["solutions"], f"{where}: no solution"
        if q.get("manual"):
            assert not q["public"] + q["hidden"], f"{where}: a manual question has tests"
            assert all(c.cell_type == "markdown" for _, c in q["solutions"]), where
            continue
        assert q["public"], f"{where}: no public test"
        assert q["hidden"], f"{where}: no hidden test"
        for _, cell in q["solutions"]:
            assert cell.cell_type == "code", f"{where}: a written answer in an autograded question"
            assert "# BEGIN SOLUTION NO PROMPT" in cell.source, where
            stub = re.findall(r'""" # BEGIN PROMPT\n(.*?)""" # END PROMPT', cell.source, re.S)
            assert stub and all("raise NotImplementedError" in s for s in stub), (
                f"{where}: each function's student stub must raise NotImplementedError")


def table_of_points(markdown: str) -> list[tuple[str, int, bool]]:
    """The rows ``| n | what | points (autograded) |`` as (question, points, written)."""
    rows = re.findall(r"^\| (\d+) \| [^|]+ \| (\d+) \((autograded|written[^)]*)\) \|$",
                      markdown, re.M)
    return [(f"q{n}", int(points), kind.startswith("written")) for n, points, kind in rows]


@pytest.mark.parametrize("name", NAMES)
def test_tables_of_points_match_the_configuration(name):
    """The table at the top of the master and the one on the book's page."""
    configured = [(q["name"], q["points"], bool(q.get("manual"))) for q in questions(name)]
    intro = next(c.source for c in master(name).cells if c.cell_type == "markdown")
    for where, text in ((f"{name}.ipynb", intro), (f"pages/{name}.md",
                                                    (PAGES / f"{name}.md").read_text())):
        table = table_of_points(text)
        assert table == configured, f"{where}: the table says {table}, the questions {configured}"


@pytest.mark.parametrize("name", NAMES)
def test_markdown_reads_everywhere_and_code_fits(name):
    """The portable Markdown of the chapters (tests/test_portable_markdown.py), no roles."""
    for index, cell in enumerate(master(name).cells):
        where = f"{name}.ipynb cell {index}"
        if cell.cell_type == "markdown":
            text = cell.source
            assert not DIRECTIVE.search(text), f"{where}: a directive fence"
            assert not TARGET.search(text), f"{where}: a (label)= target"
            assert not ROLE.findall(text), f"{where}: roles only work in the book"
            assert not FORMER_MACROS.findall(text), f"{where}: MathJax macros"
            assert not SEED_JARGON.search(text), f"{where}: name the source notes"
            bad = [line for line in maths_lines(text) if LIST_OR_HEADING.match(line)]
            assert bad == [], f"{where}: maths lines read as a list or heading: {bad}"
        elif cell.cell_type == "code":
            long = [line for line in cell.source.splitlines() if len(line) > MAX_CODE_LINE]
            assert long == [], f"{where}: code lines over {MAX_CODE_LINE} characters: {long}"
            assert not cell.outputs, f"{where}: store masters without outputs"


@pytest.mark.parametrize("name", NAMES)
def test_the_book_has_a_page_that_links_the_master(name):
    page = PAGES / f"{name}.md"
    assert f"assignments/pages/{name}" in toc_files(), f"_toc.yml does not list {page}"
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    assert f"{url}/blob/main/assignments/{name}.ipynb" in page.read_text(), (
        f"{page.name} must link the master notebook in the repository")


def test_grading_image_pins_equal_the_book_pins():
    pin = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)$", re.M)
    book = dict(pin.findall((ROOT / "requirements.txt").read_text()))
    image = dict(pin.findall((MASTERS / "requirements.txt").read_text()))
    assert image and all(book.get(k) == v for k, v in image.items()), (image, book)
    assert "otter-grader" in book, "requirements.txt must pin otter-grader"


# ----------------------------------------------------------------------------- the handouts


@pytest.mark.parametrize("name", NAMES)
def test_handout_holds_the_notebook_and_checks_only(name, generated):
    student = generated[name] / "student"
    assert {p.name for p in student.iterdir()} == {"checks.py", f"{name}.ipynb"}
    assert any(p.suffix == ".zip" for p in (generated[name] / "autograder").iterdir())


@pytest.mark.parametrize("name", NAMES)
def test_handout_shows_no_solution_and_no_hidden_test(name, generated):
    text = handout_text(generated[name] / "student")
    leaked = sorted(line for line in solution_lines(name) if line in text)
    assert leaked == [], f"{name}: solution lines in the student notebook: {leaked[:5]}"
    for q in questions(name):
        for test in q["hidden"]:
            assert test not in text, f"{name}: hidden test {test} is in the student notebook"
        for test in q["public"]:
            assert test in text, f"{name}: public test {test} is missing from the handout"


# ----------------------------------------------------------------------------- running, grading


@pytest.mark.parametrize("name", NAMES)
def test_student_version_runs_with_only_not_implemented_errors(name, runs):
    run = runs[name, "student run"]
    others = [e for e in run["errors"] if e[1] != "NotImplementedError"]
    assert others == [], f"{name}: the untouched student notebook raised {others}"
    autograded = [q["name"] for q in questions(name) if not q.get("manual")]
    assert [source for source, _ in run["checks"]] == [
        f'grader.check("{q}")' for q in autograded], name
    for source, printed in run["checks"]:
        assert "NotImplementedError" in printed and "passed" not in printed, (
            f"{name}: {source} printed {printed[:300]!r}")


@pytest.mark.parametrize("name", NAMES)
def test_solution_notebook_gets_full_marks(name, runs):
    grades = runs[name, "solution grade"]
    autograded = {q["name"]: q["points"] for q in questions(name) if not q.get("manual")}
    assert grades["questions"] == {q: (p, p) for q, p in autograded.items()}, grades
    assert grades["total"] == grades["possible"] == sum(autograded.values()), grades


@pytest.mark.parametrize("name", NAMES)
def test_untouched_student_notebook_gets_zero(name, runs):
    grades = runs[name, "student grade"]
    autograded = {q["name"]: q["points"] for q in questions(name) if not q.get("manual")}
    assert grades["questions"] == {q: (0.0, p) for q, p in autograded.items()}, grades
    assert grades["total"] == 0 and grades["possible"] == sum(autograded.values()), grades

