"""Citations read everywhere: author-year Markdown links to the references page.

A ``{cite}`` role renders only in the HTML book; JupyterLab shows its bare key with a warning
icon. So every page cites as ``[Vaswani et al. (2017)](../references.md#vaswani2017)`` (the
notes by name, ``[the NYU notes](../references.md#notes_nyu)``), written by
``tools/citations.py``. These tests hold that form: no role is left, every link names a key of
``references.bib`` and reads as that entry's author-year label.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from layout import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import citations  # noqa: E402

PAGES = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("appendix/*.ipynb"),
                *ROOT.glob("appendix/*.md"), *ROOT.glob("parts/*.md"), ROOT / "intro.md",
                *ROOT.glob("assignments/pages/*.md")])


def markdown(path: Path) -> str:
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return path.read_text()


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_citations_are_links(path):
    text = markdown(path)
    roles = citations.ROLE.findall(text)
    assert roles == [], f"{path.name}: {{cite}} roles left (python tools/citations.py): {roles}"
    prefix = "../" * (len(path.relative_to(ROOT).parts) - 1)
    for match in citations.LINK.finditer(text):
        label, key = match.groups()
        assert key in citations.entries(), f"{path.name}: unknown citation key {key!r}"
        assert match.group(0).startswith(f"[{label}]({prefix}references.md#"), (
            f"{path.name}: {match.group(0)} must link {prefix}references.md")
        name = citations.authors(key)
        assert label in (citations.label(key), name), (
            f"{path.name}: citation {key!r} reads {label!r}, expected "
            f"{citations.label(key)!r}")


def test_labels():
    assert citations.label("elman1990") == "Elman (1990)"
    assert citations.label("hochreiter1997") == "Hochreiter and Schmidhuber (1997)"
    assert citations.label("vaswani2017") == "Vaswani et al. (2017)"
    assert citations.label("notes_nyu") == "the NYU notes"


def test_conversion():
    text = ("Vaswani et al. {cite}`vaswani2017` and the NYU notes {cite}`notes_nyu`; "
            "see {cite}`bengio1994,pascanu2013`.")
    assert citations.convert(text, "../") == (
        "[Vaswani et al. (2017)](../references.md#vaswani2017) and the "
        "[NYU notes](../references.md#notes_nyu); see "
        "[Bengio et al. (1994)](../references.md#bengio1994); "
        "[Pascanu et al. (2013)](../references.md#pascanu2013).")
    with pytest.raises(KeyError, match="nobody1999"):
        citations.convert("{cite}`nobody1999`", "")
