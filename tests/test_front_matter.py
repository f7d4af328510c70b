"""The front page and the README list every chapter, in the book's order, and speak to
instructors."""

from __future__ import annotations

import re

from layout import ROOT, markdown_of, toc_files

CHAPTERS = [f for f in toc_files() if f.startswith("chapters/")]


def title(chapter: str) -> str:
    first_line = markdown_of(ROOT / f"{chapter}.ipynb")[0].splitlines()[0]
    return first_line.removeprefix("# ").strip()


def test_front_page_links_every_chapter_numbered_in_order():
    text = (ROOT / "intro.md").read_text()
    links = re.findall(r"^\s*(\d+)\. \[[^\]]+\]\((chapters/\w+)\.ipynb\)", text, re.M)
    assert [c for _, c in links] == CHAPTERS
    assert [int(n) for n, _ in links] == list(range(1, len(CHAPTERS) + 1))
    assert "## For instructors" in text


def test_readme_names_every_chapter_in_order():
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Chapters"):text.index("## Where it lives")]
    found = [(int(n), name.strip()) for n, name in
             re.findall(r"(\d+) ([^·|(]+)", table)]
    names = [title(c).removeprefix("The ") for c in CHAPTERS]
    assert [n for n, _ in found] == list(range(1, len(CHAPTERS) + 1))
    for (_, name), expected in zip(found, names):
        assert name.removeprefix("The ").startswith(expected.split(" and its")[0]), (
            name, expected)
    assert "## For instructors" in text
