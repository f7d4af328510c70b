"""Citations that read everywhere: author-year links to the entry.

The chapters are read in the HTML book, JupyterLab, Colab and on GitHub. A Sphinx role such as
``{cite}`vaswani2017``` renders only in the book (JupyterLab shows the bare key with a warning
icon), so the book writes a citation as a Markdown link every renderer follows. In a notebook
it links to the entry in the notebook's own References list (``tools/chapter_references.py``
writes that list, with the BibTeX key as anchor)::

    [Vaswani et al. (2017)](#vaswani2017)

A Markdown page, which only the book shows, links to the references page instead
(``bibtex_cite_id`` gives every entry there the id of its key)::

    [Vaswani et al. (2017)](../references.md#vaswani2017)

The text is the entry's author-year label (:func:`label`); ``_ext/portable_markdown.py``
resolves both forms in the book and warns on an unknown key. The source notes are cited by
name: ``[the CMU 11-785 notes](#notes_cmu)``.

Usage: ``python tools/citations.py FILE...`` rewrites any remaining ``{cite}`` roles in
Markdown files and notebooks into such links (where the sentence already names the work,
"Vaswani et al. show {cite}`vaswani2017`", that name becomes the link), and brings the
References list of each notebook up to date.
"""

from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from pathlib import Path

from pybtex.backends.plaintext import Backend
from pybtex.database import parse_file
from pybtex.richtext import Text

ROOT = Path(__file__).resolve().parent.parent
BIB = ROOT / "references.bib"
TEXT = Backend()
ROLE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
# a citation: to the references page (Markdown pages) or to the entry in the notebook itself
LINK = re.compile(r"\[([^][\n]+)\]\(((?:\.\./)*references\.md)?#([\w-]+)\)")


@lru_cache(maxsize=None)
def plain(latex: str) -> str:
    """BibTeX's LaTeX as text: ``J{\\"u}rgen`` -> ``Jürgen``."""
    return Text.from_latex(latex).render(TEXT)  # render_as() scans every entry point


@lru_cache(maxsize=None)
def entries() -> dict:
    return dict(parse_file(str(BIB)).entries)


def is_notes(key: str) -> bool:
    """The five source notes are cited by name, not by author and year."""
    return key.startswith("notes_")


def authors(key: str) -> str:
    """``Elman``, ``Hochreiter and Schmidhuber``, ``Vaswani et al.``; the notes' name."""
    entry = entries()[key]
    people = entry.persons.get("author", [])
    names = [plain(" ".join(p.prelast_names + p.last_names)) for p in people]
    if is_notes(key):
        return names[0]
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


def label(key: str) -> str:
    """The link text of a citation: ``Vaswani et al. (2017)``, or ``the NYU notes``."""
    if is_notes(key):
        return f"the {authors(key)}"
    return f"{authors(key)} ({entries()[key].fields['year']})"


def link(key: str, base: str, text: str | None = None) -> str:
    """``[label](base + key)``: ``base`` is ``#`` in a notebook, ``../references.md#`` in a
    Markdown page one folder down."""
    if key not in entries():
        raise KeyError(f"citation key {key!r} is not in {BIB.name}")
    return f"[{text or label(key)}]({base}{key})"


def _mention(before: str, key: str) -> tuple[int, int]:
    """Where the sentence before a role already names the cited work ("Vaswani et al.", "the
    CMU 11-785 notes", maybe broken over lines) outside any link: its span, or (-1, -1)."""
    ends = [m.end() for m in re.finditer(r"(?<! al)\.\s|\n\n|\*\*", before)]
    sentence_start = ends[-1] if ends else 0
    name = r"\s+".join(map(re.escape, authors(key).split()))
    found = list(re.finditer(name, before))
    if not found:
        return -1, -1
    at, end = found[-1].span()
    if at < sentence_start or "](" in before[at:] or before[at - 1:at] == "[":
        return -1, -1
    return at, end


def convert(text: str, base: str) -> str:
    """Rewrite every ``{cite}`` role of Markdown ``text`` as author-year links.

    A single-key role whose sentence already names the work links that name instead (with the
    year for a paper) and disappears; otherwise the role becomes the link itself, and several
    keys become links separated by semicolons.
    """
    out, last = [], 0
    for match in ROLE.finditer(text):
        keys = [k.strip() for k in match.group(1).split(",")]
        before = text[last:match.start()]
        single = len(keys) == 1 and keys[0] in entries()
        at, end = _mention(before, keys[0]) if single else (-1, -1)
        if at >= 0:
            key = keys[0]
            shown = authors(key) if is_notes(key) else label(key)
            before = before[:at] + link(key, base, shown) + before[end:]
            out.append(before.rstrip(" ") if not before.endswith("\n") else before)
        else:
            out.append(before + "; ".join(link(k, base) for k in keys))
        last = match.end()
    out.append(text[last:])
    return "".join(out)


def base(path: Path) -> str:
    """Where a citation of ``path`` links: its own References list, or the references page."""
    if path.suffix == ".ipynb":
        return "#"
    depth = len(path.resolve().relative_to(ROOT).parts) - 1
    return "../" * depth + "references.md#"


def convert_file(path: Path) -> bool:
    target = base(path)
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text())
        changed = False
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            old = "".join(cell["source"])
            new = convert(old, target)
            if new != old:
                cell["source"] = new.splitlines(keepends=True)
                changed = True
        import chapter_references  # it builds on this module

        if changed:
            path.write_text(chapter_references.dumps(nb))
        return chapter_references.write(path) or changed
    old = path.read_text()
    new = convert(old, target)
    if new != old:
        path.write_text(new)
    return new != old


if __name__ == "__main__":
    for name in sys.argv[1:]:
        if convert_file(Path(name)):
            print(f"converted {name}")
