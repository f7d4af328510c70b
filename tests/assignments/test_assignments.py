"""The graded assignments in assignments/: masters well formed, handouts safe, fair
grades, a guide that works.

Without running anything: every master notebook is in otter assign's format
(configuration with the grading plugin, questions with points, public tests worth
nothing and hidden tests worth the points, solutions that leave a stub raising
NotImplementedError, one written and one training question), its table of points agrees
with its configuration, its Markdown reads in every renderer, and the book has a page
for it. After ``make assignments`` (fixtures in ``conftest.py``): the student version
holds no solution text and no hidden test; run top to bottom it fails only with
NotImplementedError; ``otter run`` gives every submission of the gallery
(``gallery.py``: correct, buggy, tampering, crashing...) the score it deserves, question
by question; and the guide's commands run as written in a scratch clone, grading a
folder into one CSV and exporting the written answers (``grading.run_guide``).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import nbformat
import pytest
import yaml

import attacks
import gallery
import grading
from grading import master_names
from layout import ROOT, toc_files
from test_portable_markdown import (DIRECTIVE, FORMER_MACROS, LIST_OR_HEADING,
                                    MAX_CODE_LINE, ROLE, SEED_JARGON, TARGET,
                                    maths_lines)

NAMES = master_names()
MASTERS = ROOT / "assignments"
PAGES = MASTERS / "pages"


def master(name: str) -> nbformat.NotebookNode:
    return nbformat.read(MASTERS / f"{name}.ipynb", as_version=4)


def config(name: str) -> dict:
    first = master(name).cells[0]
    is_config = first.source.startswith("# ASSIGNMENT CONFIG")
    assert first.cell_type == "raw" and is_config, (
        f"{name}: the first cell must be the raw # ASSIGNMENT CONFIG cell")
    return yaml.safe_load(first.source)


def questions(name: str) -> list[dict]:
    """Every question of a master: its configuration, test names, solution and prompt
    cells."""
    found, question, block = [], None, None
    for index, cell in enumerate(master(name).cells):
        text = cell.source
        if cell.cell_type == "raw" and text.startswith("# BEGIN QUESTION"):
            question = {**yaml.safe_load(text.split("\n", 1)[1]), "public": [],
                        "hidden": [], "solutions": [], "prompts": []}
            found.append(question)
        elif cell.cell_type == "raw" and text.startswith("# END QUESTION"):
            if question is not None:
                tests = question["public"] + question["hidden"]
                points = question.get("points", 0)
                question["total"] = float(sum(points) if isinstance(points, list)
                                          else points)
                question["tests"] = tests
            question = None
        elif cell.cell_type == "raw" and re.match(r"# (BEGIN|END) (SOLUTION|TESTS)",
                                                  text):
            block = text.split()[2].lower() if text.startswith("# BEGIN") else None
        elif question is not None and block == "tests":
            name_of = re.search(r"^def (\w+)\(", text, re.M).group(1)
            hidden = text.splitlines()[0].strip().upper().startswith("# HIDDEN")
            question["hidden" if hidden else "public"].append(name_of)
            question.setdefault("order", []).append((name_of, hidden))
        elif question is not None and block == "solution":
            question["solutions"].append((index, cell))
        elif question is not None and cell.cell_type == "markdown":
            question["prompts"].append(text)
    return found


def solution_lines(name: str) -> set[str]:
    """Lines that only the solutions of a master hold (a handout must show none of
    them).

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
    """Everything a folder shows as text: notebook cells and metadata (where otter keeps
    the tests), decoded from JSON, and every other text file."""
    parts = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            parts += [cell.source for cell in nb.cells]
            tests = nb.metadata.get("otter", {}).get("tests", {})
            parts += [str(v) for v in tests.values()]
            parts.append(json.dumps(nb.metadata))
        elif path.suffix in (".py", ".txt", ".json", ".md", ".yml"):
            parts.append(path.read_text(errors="replace"))
    return "\n".join(parts)


# ----------------------------------------------------------------------------- without
# running


def test_there_are_five_assignments():
    assert NAMES == sorted(["recurrence", "gating", "attention", "transformer",
                            "gru_to_attention"]), NAMES


def plugin_config(name: str) -> dict:
    entries = [e for e in config(name).get("plugins", [])
               if isinstance(e, dict) and "seqlearn_grading.SafeGrading" in e]
    assert len(entries) == 1, (f"{name}: the plugin seqlearn_grading.SafeGrading must "
                               "be listed")
    return entries[0]["seqlearn_grading.SafeGrading"]


@pytest.mark.parametrize("name", NAMES)
def test_configuration(name):
    cfg = config(name)
    assert cfg["name"] == name, f"{name}: the configuration's name is {cfg['name']!r}"
    assert "checks.py" in cfg["files"], (
        f"{name}: checks.py must be copied to the handout")
    assert cfg["tests"] == {"ok_format": False}, (
        f"{name}: tests must be exception-based")
    assert cfg["requirements"] == "requirements.txt", name
    assert cfg["export_cell"]["pdf"] is False, f"{name}: a PDF export needs LaTeX"


@pytest.mark.parametrize("name", NAMES)
def test_grading_plugin_configuration(name):
    """Forbidden references that exist (functions, or objects such as autograd's
    engine); model answers only of earlier questions; one question (the training one)
    with a longer time limit."""
    import importlib

    plugin = plugin_config(name)
    assert plugin.get("forbid"), f"{name}: name the references an answer may not call"
    for dotted in plugin["forbid"]:
        parts, obj = dotted.split("."), None
        for cut in range(len(parts) - 1, 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for part in parts[cut:]:
                obj = getattr(obj, part, None)
            break
        assert obj is not None and not isinstance(obj, type(importlib)), (
            f"{name}: forbid names {dotted}, which does not exist")
    found = questions(name)
    order = [q["name"] for q in found]
    defined = {}
    for q in found:
        for _, cell in q["solutions"]:
            for fn in re.findall(r"^def (\w+)\(", cell.source, re.M):
                defined[fn] = q["name"]
    settings = plugin.get("questions") or {}
    for question, own in settings.items():
        assert question in order, f"{name}: plugin settings for unknown {question}"
        for fn in own.get("use_reference", []):
            assert fn in defined and order.index(defined[fn]) < order.index(question), (
                f"{name} {question}: use_reference {fn} is no earlier question's "
                "answer")
    long = [q for q, own in settings.items() if own.get("call_time_limit", 0) > 60]
    assert len(long) == 1, (f"{name}: one training question with a longer limit, "
                            f"got {long}")


@pytest.mark.parametrize("name", NAMES)
def test_every_seqlearn_import_of_a_master_resolves(name):
    """A name that moved inside seqlearn breaks a handout or its tests: say which."""
    import ast
    import importlib

    missing = []
    for cell in master(name).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "seqlearn"):
                module = importlib.import_module(node.module)
                missing += [f"{node.module}.{a.name}" for a in node.names
                            if not hasattr(module, a.name)]
    assert missing == [], f"{name} imports names that seqlearn lacks: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_questions_have_points_tests_and_stubs(name):
    found = questions(name)
    names = [f"q{i}" for i in range(1, len(found) + 1)]
    assert [q["name"] for q in found] == names, name
    assert any(q.get("manual") for q in found), f"{name}: no written question"
    for q in found:
        where = f"{name} {q['name']}"
        assert q["total"] > 0, f"{where}: no points"
        assert q["prompts"], f"{where}: no prompt"
        assert q["solutions"], f"{where}: no solution"
        if q.get("manual"):
            assert not q["public"] + q["hidden"], (
                f"{where}: a manual question has tests")
            assert all(c.cell_type == "markdown" for _, c in q["solutions"]), where
            continue
        assert q["public"], f"{where}: no public test"
        assert q["hidden"], f"{where}: no hidden test"
        points = q["points"]
        assert isinstance(points, list) and len(points) == len(q["order"]), (
            f"{where}: give points as a list, one value per test case")
        for (test, hidden), value in zip(q["order"], points):
            assert (value > 0) == hidden, (
                f"{where}: {test} is {'hidden' if hidden else 'public'} and worth "
                f"{value}; "
                "public tests carry no points, hidden tests carry them all")
        for _, cell in q["solutions"]:
            assert cell.cell_type == "code", (
                f"{where}: a written answer in an autograded question")
            assert "# BEGIN SOLUTION NO PROMPT" in cell.source, where
            stub = re.findall(r'""" # BEGIN PROMPT\n(.*?)""" # END PROMPT', cell.source,
                              re.S)
            assert stub and all("raise NotImplementedError" in s for s in stub), (
                f"{where}: each function's student stub must raise NotImplementedError")


def table_of_points(markdown: str) -> list[tuple[str, float, bool]]:
    """The rows ``| n | what | points (autograded) |`` as (question, points,
    written)."""
    rows = re.findall(r"^\| (\d+) \| [^|]+ \| (\d+) \((autograded|written[^)]*)\) \|$",
                      markdown, re.M)
    return [(f"q{n}", float(points), kind.startswith("written"))
            for n, points, kind in rows]


@pytest.mark.parametrize("name", NAMES)
def test_tables_of_points_match_the_configuration(name):
    """The table at the top of the master and the one on the book's page."""
    configured = [(q["name"], q["total"], bool(q.get("manual")))
                  for q in questions(name)]
    intro = next(c.source for c in master(name).cells if c.cell_type == "markdown")
    page = (PAGES / f"{name}.md").read_text()
    for where, text in ((f"{name}.ipynb", intro), (f"pages/{name}.md", page)):
        table = table_of_points(text)
        assert table == configured, (f"{where}: the table says {table}, the questions "
                                     f"{configured}")


@pytest.mark.parametrize("name", NAMES)
def test_markdown_reads_everywhere_and_code_fits(name):
    """The portable Markdown of the chapters (tests/test_portable_markdown.py), no
    roles."""
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
            long = [line for line in cell.source.splitlines()
                    if len(line) > MAX_CODE_LINE]
            assert long == [], (f"{where}: code lines over {MAX_CODE_LINE} characters: "
                                f"{long}")
            assert not cell.outputs, f"{where}: store masters without outputs"


@pytest.mark.parametrize("name", NAMES)
def test_the_book_has_a_page_that_links_the_master(name):
    page = PAGES / f"{name}.md"
    assert f"assignments/pages/{name}" in toc_files(), f"_toc.yml does not list {page}"
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    assert f"{url}/blob/main/assignments/{name}.ipynb" in page.read_text(), (
        f"{page.name} must link the master notebook in the repository")


def test_grading_image_pins_equal_the_book_pins():
    """The libraries of the grading image are pinned as in the book's requirements.txt
    (the wheels of seqlearn and the plugin: tests/assignments/test_grading_image.py)."""
    pin = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)$", re.M)
    book = dict(pin.findall((ROOT / "requirements.txt").read_text()))
    image = dict(pin.findall((MASTERS / "requirements.txt").read_text()))
    assert image and all(book.get(k) == v for k, v in image.items()), (image, book)
    assert "otter-grader" in book, "requirements.txt must pin otter-grader"


# ----------------------------------------------------------------------------- the
# handouts


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
            assert test not in text, (
                f"{name}: hidden test {test} is in the student notebook")
        for test in q["public"]:
            assert test in text, (
                f"{name}: public test {test} is missing from the handout")


# ----------------------------------------------------------------------------- running,
# grading


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


GALLERY = [(name, variant) for name in NAMES for variant in gallery.GALLERY[name]]


@pytest.mark.parametrize("name,variant", GALLERY, ids=[f"{n}: {v}" for n, v in GALLERY])
def test_gallery_scores_what_it_deserves(name, variant, runs):
    """Each submission of the gallery gets, question by question, the points it
    deserves."""
    grades = runs[name, variant]
    found = questions(name)
    points = {q["name"]: q["total"] for q in found}
    written = {q["name"] for q in found if q.get("manual")}
    expected = gallery.expected_scores(gallery.GALLERY[name][variant], points, written)
    got = {q: score for q, (score, _) in grades["questions"].items()}
    possible = {q: most for q, (_, most) in grades["questions"].items()}
    why = gallery.GALLERY[name][variant].why
    wrong = {q: (got.get(q), want) for q, want in expected.items()
             if got.get(q) != want}
    details = "\n".join(grades["summaries"][q][:1500] for q in wrong if q in
                        grades["summaries"])
    assert not wrong, f"{name}, {variant} ({why}): (got, deserved) {wrong}\n{details}"
    for question in gallery.GALLERY[name][variant].hardcode:
        cases = grades["cases"][question]
        assert all(passed for hidden, passed in cases if not hidden), (
            f"{name}, {variant}: the hard-coded {question} should pass its public "
            "tests")
    assert possible == points, f"{name}: possible points {possible}, expected {points}"
    assert grades["possible"] == sum(points.values()), "the total counts written points"


@pytest.mark.parametrize("name", NAMES)
def test_feedback_names_the_difference_without_the_answer(name, runs):
    """A buggy answer's message names the question's function and what differs; hidden
    messages hold no model answer."""
    for variant, spec in gallery.GALLERY[name].items():
        summaries = runs[name, variant]["summaries"]
        for question, code in spec.answers.items():
            if question in spec.expected and spec.expected[question] == 0 and code:
                text = summaries[question]
                assert "Test case failed" in text, (name, variant, question, text[:500])
        for text in summaries.values():
            assert "# BEGIN SOLUTION" not in text and "expected c**2" not in text, text


def test_messages_of_tampering_and_crashes(runs):
    """What a student reads: the forbidden reference, the time limit, the ended
    process."""
    calls = runs["recurrence", "calls the reference"]["summaries"]["q2"]
    assert "is a reference this assignment asks you to write" in calls, calls[:800]
    loop = runs["recurrence", "loops forever in q2"]["summaries"]["q2"]
    assert "did not return within" in loop, loop[:800]
    killed = runs["gru_to_attention", "kills its kernel in q3"]["summaries"]["q3"]
    assert "ended the Python process" in killed, killed[:800]
    assert "is not defined" in killed, killed[:800]
    nan = runs["attention", "one bug in q2 and q4"]["summaries"]["q4"]
    assert "NaN" in nan, nan[:800]


@pytest.mark.parametrize("name", sorted(attacks.ATTACKS))
def test_attacks_graded_with_classmates_score_what_they_deserve(name, runs):
    """``grading.grade_class``: a determined student's attacks, graded by
    tools/grade_folder.py in one folder with correct classmates before and after them,
    each score what they deserve, question by question; the classmates' marks are
    those they deserve; no student's process is alive afterwards, and nothing marked the
    output folder."""
    graded = runs[name, "class"]
    assert graded["returncode"] == 0, graded["output"]
    found = questions(name)
    points = {q["name"]: q["total"] for q in found}
    written = {q["name"] for q in found if q.get("manual")}
    wrong = {}
    for student, variant in graded["students"].items():
        row = graded["rows"][student]
        assert row["status"].startswith("ok"), (student, variant, row,
                                                graded["output"])
        expected = gallery.expected_scores(gallery.find(name, variant), points, written)
        for question, score in expected.items():
            if question not in written and float(row[question]) != score:
                wrong[student, variant, question] = (float(row[question]), score)
    details = {key: graded["feedback"].get(key[0], "")[:1200] for key in wrong}
    assert not wrong, f"{name}: (got, deserved) {wrong}\n{details}"
    assert graded["left"] == [], f"alive after grading: {graded['left']}"
    assert graded["haunted"] == [], graded["haunted"]
    for student in ("aaron", "zoe"):
        autograded = sum(points[q] for q in points if q not in written)
        assert float(graded["rows"][student]["autograded"]) == autograded


@pytest.mark.parametrize("name", sorted(attacks.ATTACKS))
def test_one_sandbox_for_the_gallery_grades_as_otter_run_does(name, runs):
    """The gallery is graded through one grader and sandbox per assignment
    (``seqlearn_grading.batch``); the classmates graded with ``otter run`` by
    tools/grade_folder.py (a correct and a one-bug submission) get the same points,
    question by question, both ways."""
    graded = runs[name, "class"]
    for student, variant in attacks.classmates(name).items():
        row = graded["rows"][student]
        by_otter_run = {q: float(row[q]) for q in runs[name, variant]["questions"]
                        if row.get(q, "") != ""}        # written ones: blank, unmarked
        batched = {q: score
                   for q, (score, _) in runs[name, variant]["questions"].items()
                   if q in by_otter_run}
        assert batched and batched == by_otter_run, (name, student, variant)


def test_guide_commands_run_as_written(runs):
    """Every command of the guide, in order, in a scratch clone (``grading.run_guide``):
    each ends with exit status 0, the folders it writes to exist by then, and what it
    writes is there. ``otter grade`` (Docker) is not run: its options are checked."""
    name, students = grading.GUIDE_SUBMISSIONS
    guide = runs[name, "guide"]
    hows = {how for _, how, _, _ in guide["steps"]}
    assert hows == {"run", "make -n", "docker"}, guide["steps"]
    for command, how, code, output in guide["steps"]:
        assert code == 0, f"the guide's `{command}` ({how}) failed:\n{output}"
        words = shlex.split(command)
        if how == "docker":
            helps = subprocess.run([str(ROOT / ".venv" / "bin" / "otter"), "grade",
                                    "--help"], capture_output=True, text=True).stdout
            for option in (w for w in words if w.startswith("-")):
                assert re.search(rf"(^|[ ,]){re.escape(option)}\b", helps, re.M), (
                    f"otter grade has no option {option}")
            made = [shlex.split(c)[2:] for c, _, _, _ in guide["steps"]
                    if c.startswith("mkdir -p ")]
            folder = words[words.index("-o") + 1].rstrip("/")
            assert any(folder in m for m in made), (
                f"the guide runs otter grade -o {folder} before creating it")
    files = guide["files"]
    assert "results/alice/results.json" in files, sorted(files)
    assert any(how == "docker" for _, how, _, _ in guide["steps"]), (
        "the guide should show otter grade")
    assert "grades-docker/written/alice.md" in files, sorted(files)


def test_guide_grades_a_folder_into_one_csv_with_written_answers(runs):
    """The guide's tools/grade_folder.py commands: one row per student, written answers
    exported one file per student, a bug costing its questions only, the exported zip
    graded like its notebook without unpickling its otter log, marks added to totals."""
    import csv
    import io

    name, students = grading.GUIDE_SUBMISSIONS
    guide = runs[name, "guide"]
    files = guide["files"]
    table = csv.DictReader(io.StringIO(guide["unmarked"]))
    rows = {row["student"]: row for row in table}
    assert set(rows) == {*students, "carol"}, rows
    assert not guide["unpickled"], "the grader unpickled the student's otter log"
    assert "differs from logged score" not in files["grades/logs/carol.txt"]
    exported = rows.pop("carol")
    assert exported == {**rows["alice"], "student": "carol",
                        "seconds": exported["seconds"]}, exported
    points = {q["name"]: q["total"] for q in questions(name)}
    written = [q["name"] for q in questions(name) if q.get("manual")]
    for student, row in rows.items():
        variant = gallery.GALLERY[name][students[student]]
        expected = gallery.expected_scores(variant, points, set(written))
        for question, score in expected.items():
            if question not in written:
                assert float(row[question]) == score, (student, question, row)
        assert row["possible"] == f"{sum(points.values()):g}", row
        assert row["status"].startswith("ok"), row
        for folder in ("grades/written", "grades/feedback"):
            suffix = ".md" if folder.endswith("written") else ".txt"
            assert f"{folder}/{student}{suffix}" in files, sorted(files)
    assert "grades/written_marks.csv" in files
    model = files["grades/written/alice.md"]
    assert f"## {written[0]}" in model and "### Answer" in model, model[:500]
    marked = {row["student"]: row
              for row in csv.DictReader(io.StringIO(files["grades/grades.csv"]))}
    alice = marked["alice"]
    assert alice[written[0]] == "1.5" and alice["written"] == "1.5", alice
    assert alice["seconds"] == rows["alice"]["seconds"] != "0.0", (alice, rows["alice"])
    first, *_, marking = [output for command, _, _, output in guide["steps"]
                          if "grade_folder.py" in command and "--written-only"
                          not in command]
    warning = "warning: 3 of 3 students have written answers without a mark"
    assert warning in first, first
    assert "warning" not in marking, marking
    assert float(alice["total"]) == float(alice["autograded"]) + 1.5, alice
    single = json.loads(files["results/alice/results.json"])
    scores = {t["name"]: t.get("score") for t in single["tests"] if "max_score" in t}
    assert sum(scores.values()) == float(rows["alice"]["autograded"]), scores
