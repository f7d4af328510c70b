"""Citations read everywhere: author-year Markdown links to the entry.

A ``{cite}`` role renders only in the HTML book; JupyterLab shows its bare key with a warning
icon. So a notebook cites as ``[Vaswani et al. (2017)](#vaswani2017)`` (the notes by name,
``[the NYU notes](#notes_nyu)``), a link to the entry in its own References list, which
``tools/chapter_references.py`` writes from ``references.bib``; a Markdown page, which only
the book shows, links to the references page, ``../references.md#vaswani2017``. These tests
hold that form: no role is left, every link names a key of ``references.bib`` and reads as
that entry's author-year label, and every notebook ends with exactly the entries it cites.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from layout import ROOT, markdown_of

sys.path.insert(0, str(ROOT / "tools"))
import chapter_references  # noqa: E402
import citations  # noqa: E402

PAGES = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("appendix/*.ipynb"),
                *ROOT.glob("appendix/*.md"), *ROOT.glob("parts/*.md"), ROOT / "intro.md",
                *ROOT.glob("assignments/pages/*.md")])


def markdown(path: Path) -> str:
    if path.suffix == ".ipynb":
        return "\n".join(markdown_of(path))
    return path.read_text()


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_citations_are_links(path):
    text = markdown(path)
    roles = citations.ROLE.findall(text)
    assert roles == [], f"{path.name}: {{cite}} roles left (python tools/citations.py): {roles}"
    base = citations.base(path)
    for match in citations.LINK.finditer(text):
        label, _, key = match.groups()
        assert key in citations.entries(), f"{path.name}: unknown citation key {key!r}"
        assert match.group(0) == f"[{label}]({base}{key})", (
            f"{path.name}: {match.group(0)} must link {base}{key}")
        name = citations.authors(key)
        assert label in (citations.label(key), name), (
            f"{path.name}: citation {key!r} reads {label!r}, expected "
            f"{citations.label(key)!r}")


LINK_THEN_PUNCTUATION = re.compile(r"\]\((?:#|\.\./references\.md#)[\w-]+\)\n\s*[,.;:)]")
NAME_TWICE = re.compile(r"\b([A-Z][a-z]+ et)\s+al\.\s+\[\1 al\.")


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_citations_read_cleanly(path):
    """No artefact of the conversion from roles: a line that starts with the punctuation
    after a link (which renders as "(2015) ," or "(2015) )."), or the authors named
    twice ("Vaswani et al. [Vaswani et al. (2017)]")."""
    text = markdown(path)
    for pattern in (LINK_THEN_PUNCTUATION, NAME_TWICE):
        found = [text[max(0, m.start() - 40):m.end() + 10] for m in pattern.finditer(text)]
        assert found == [], f"{path.name}: {found}"


def test_labels():
    assert citations.label("elman1990") == "Elman (1990)"
    assert citations.label("hochreiter1997") == "Hochreiter and Schmidhuber (1997)"
    assert citations.label("vaswani2017") == "Vaswani et al. (2017)"
    assert citations.label("notes_nyu") == "the NYU notes"


def test_conversion():
    text = ("Vaswani et al. {cite}`vaswani2017` and the NYU notes {cite}`notes_nyu`; "
            "see {cite}`bengio1994,pascanu2013`.")
    assert citations.convert(text, "../references.md#") == (
        "[Vaswani et al. (2017)](../references.md#vaswani2017) and the "
        "[NYU notes](../references.md#notes_nyu); see "
        "[Bengio et al. (1994)](../references.md#bengio1994); "
        "[Pascanu et al. (2013)](../references.md#pascanu2013).")
    assert citations.convert("see {cite}`elman1990`", "#") == "see [Elman (1990)](#elman1990)"
    with pytest.raises(KeyError, match="nobody1999"):
        citations.convert("{cite}`nobody1999`", "")


NOTEBOOKS = chapter_references.notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_ends_with_the_entries_it_cites(path):
    """The last cell is ``## References``, its list written by tools/chapter_references.py
    from references.bib for exactly the keys the notebook links to."""
    assert chapter_references.main(["--check", str(path)]) == 0, (
        f"{path.name}: run python tools/chapter_references.py {path.relative_to(ROOT)}")
    cells = json.loads(path.read_text())["cells"]
    keys = chapter_references.cited(cells)
    last = "".join(cells[-1]["source"])
    if keys:
        assert cells[-1]["cell_type"] == "markdown" and last.startswith("## References")
    listed = re.findall(r'^- <a id="([\w-]+)"></a>', last, re.MULTILINE)
    assert listed == keys, f"{path.name}: lists {listed}, cites {keys}"


def test_the_check_finds_a_stale_list(tmp_path):
    nb = json.loads((ROOT / "chapters" / "bptt.ipynb").read_text())
    stale = tmp_path / "stale.ipynb"
    cell = nb["cells"][3]
    assert cell["cell_type"] == "markdown"
    cell["source"] = [*cell["source"], "\n\nSee [Jordan (1986)](#jordan1986)."]
    stale.write_text(chapter_references.dumps(nb))
    assert chapter_references.main(["--check", str(stale)]) == 1
    chapter_references.write(stale)
    assert chapter_references.main(["--check", str(stale)]) == 0
    last = "".join(json.loads(stale.read_text())["cells"][-1]["source"])
    assert '<a id="jordan1986"></a>Jordan, M. I. (1986).' in last


def test_entries():
    assert chapter_references.entry_markdown("elman1990") == (
        '- <a id="elman1990"></a>Elman, J. L. (1990). Finding Structure in Time. '
        "*Cognitive Science*, 14(2), 179–211.")
    assert chapter_references.entry_markdown("graves2014").endswith(
        "[arXiv:1410.5401](https://arxiv.org/abs/1410.5401)")
    assert "<https://ogunlao.github.io/" in chapter_references.entry_markdown("ogunlao2020")
    assert chapter_references.entry_markdown("notes_nyu").startswith(
        '- <a id="notes_nyu"></a>NYU notes (2020). *NYU Deep Learning')
