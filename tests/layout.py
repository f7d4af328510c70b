"""Where the book lives: its root folder, the entries of _toc.yml and the chapter notebooks."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def toc_files() -> list[str]:
    """Every ``file:`` entry of _toc.yml (root included), without extension."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return files


def chapter_notebooks() -> list[Path]:
    return sorted((ROOT / "chapters").glob("*.ipynb"))


def markdown_of(path: Path) -> list[str]:
    """The source of every Markdown cell of a notebook, in order."""
    import json

    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in cells if c["cell_type"] == "markdown"]


RAW_MARKUP = ("{math}", ":::{", "```{", "{eq}", "{cite}", "{doc}", "{ref}", "{admonition}")
"""Text that means a renderer showed MyST markup instead of rendering it."""
