"""Reading otter's notebooks: a student's cells by question, written and model answers.

A student notebook written by ``otter assign`` shows each question as a Markdown prompt
that starts with ``**Question N`` (written questions sit between the comments
``<!-- BEGIN QUESTION -->`` and ``<!-- END QUESTION -->``), the answer cells, and for
autograded questions a cell ``grader.check("qN")``. A student may add, move or delete
cells; the rules below only need the prompts and the check cells to stay in order.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

PROMPT = re.compile(r"^(?:<!--\s*BEGIN QUESTION\s*-->\s*)?\*\*Question (\d+)\b")
CHECK = re.compile(r"""grader\.check\(\s*["'](q\d+)["']\s*\)""")
OTTER_LINE = re.compile(r"^\s*(?:import otter\b|grader\s*=\s*otter\.|grader\.\w+\()")


@dataclass
class Cell:
    index: int                  # position in the notebook
    source: str                 # without otter's own lines (grader.check, export, ...)
    question: str | None        # the question whose answer region holds the cell


@dataclass
class StudentNotebook:
    cells: list[Cell] = field(default_factory=list)
    ends: dict[str, int] = field(default_factory=dict)  # question -> end of its region

    def cells_for(self, question: str) -> list[Cell]:
        """The code cells a question's answer may rely on: every cell before its region
        ends."""
        end = self.ends.get(question)
        return [c for c in self.cells if end is None or c.index <= end]


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def read_student_notebook(nb: Any) -> StudentNotebook:
    """The code cells of a submission, each with the question region it belongs to."""
    result = StudentNotebook()
    current: str | None = None
    prompts: list[tuple[int, str]] = []
    for index, cell in enumerate(nb.get("cells", [])):
        text = _source(cell)
        if cell.get("cell_type") == "markdown":
            found = PROMPT.match(text.lstrip())
            if found:
                current = f"q{found.group(1)}"
                prompts.append((index, current))
            continue
        if cell.get("cell_type") != "code":
            continue
        checked = CHECK.findall(text)
        lines = [line for line in text.splitlines() if not OTTER_LINE.match(line)]
        kept = "\n".join(lines)
        if kept.strip() and not text.lstrip().startswith("# Initialize Otter"):
            result.cells.append(Cell(index, kept, current))
        for question in checked:
            result.ends.setdefault(question, index)
            if question == current:
                current = None
    for position, (index, question) in enumerate(prompts):
        if question not in result.ends:          # no check cell: up to the next prompt
            following = [i for i, _ in prompts[position + 1:]]
            result.ends[question] = following[0] if following else 10 ** 9
    return result


def written_answers(nb: Any) -> list[tuple[str, str, str]]:
    """``(question, prompt, answer)`` for every written question of a student
    notebook."""
    found = []
    inside = False
    for cell in nb.get("cells", []):
        text = _source(cell)
        if "<!-- BEGIN QUESTION -->" in text:
            inside = True
            prompt = text.replace("<!-- BEGIN QUESTION -->", "").strip()
            match = PROMPT.match(prompt)
            found.append([f"q{match.group(1)}" if match else "?", prompt, []])
            if "<!-- END QUESTION -->" not in text:
                continue
        if inside and "<!-- END QUESTION -->" in text:
            inside = False              # what follows the comment is the next section
            before = text.split("<!-- END QUESTION -->")[0].strip()
            if before and found and before not in found[-1][1]:
                found[-1][2].append(before)
            continue
        if inside and found:
            answer = text.strip()
            if cell.get("cell_type") == "code" and answer:
                answer = f"```python\n{answer}\n```"
            if answer:
                found[-1][2].append(answer)
    return [(q, prompt, "\n\n".join(parts)) for q, prompt, parts in found]


def _parsed(source: str) -> ast.Module:
    """A cell's syntax tree; an empty one for a cell that is not valid Python."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def top_level_names(source: str) -> set[str]:
    """The functions and classes that a cell defines at its top level."""
    return {node.name for node in _parsed(source).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def imports_of(source: str) -> list[str]:
    """Every top-level import statement of a cell, one per line, ``otter`` left out."""
    found = []
    for node in _parsed(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) \
                else [node.module or ""]
            if not any(m.split(".")[0] == "otter" for m in modules):
                found.append(ast.unparse(node))
    return found


def imported_modules(source: str) -> list[str]:
    """The modules that a cell's import statements load."""
    found = []
    for node in ast.walk(_parsed(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
    return [m for m in found if m.split(".")[0] not in ("otter", "checks")]


def model_answers(nb: Any) -> tuple[list[str], dict[str, str]]:
    """The imports of a solutions notebook and, for every name its cells define, the
    source of the cell that defines it."""
    imports: list[str] = []
    definitions: dict[str, str] = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        text = _source(cell)
        text = "\n".join(line for line in text.splitlines()
                         if not OTTER_LINE.match(line))
        for line in imports_of(text):
            if line not in imports:
                imports.append(line)
        for name in top_level_names(text):
            definitions[name] = text
    return imports, definitions
