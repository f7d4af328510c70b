"""Each notebook lists the entries it cites, so its citations resolve anywhere.

A chapter is read in the HTML book, in JupyterLab (jupyterlab-myst), on Colab and on
GitHub; only the book renders the ``{bibliography}`` of ``references.md``. So a notebook
cites as a link to an anchor in itself, ``[Elman (1990)](#elman1990)``, and its last
cell, ``## References``, lists exactly the entries it cites, each opening with that
anchor::

    - <a id="elman1990"></a>Elman, J. L. (1990). Finding structure in time ...

An HTML ``<a id>`` is the anchor every renderer keeps (JupyterLab's sanitiser turns it
into ``data-jupyter-id`` and still scrolls to it; GitHub prefixes it and follows the
link). The list sits between ``START`` and ``END`` (HTML comments, which no renderer
shows) and is written from ``references.bib``: author-year, with a link where the entry
has a DOI, a URL or an arXiv number. Prose before ``START`` in the References cell is
the chapter's own and stays as it is.

Usage: ``python tools/chapter_references.py [--check] [NOTEBOOK ...]`` (default: every
notebook of ``chapters/`` and ``appendix/``). ``--check`` changes nothing and fails when
a list is stale (``tests/test_citations.py`` runs it).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from citations import ROOT, entries, is_notes, plain

START = "<!-- references:start (tools/chapter_references.py writes this list) -->"
END = "<!-- references:end -->"
HEADING = re.compile(r"^## References\s*$", re.MULTILINE)
ANCHOR_LINK = re.compile(r"\[[^][\n]+\]\(#([\w-]+)\)")
BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END), re.DOTALL)
URL = re.compile(r"\\url\{([^}]+)\}")
ARXIV = re.compile(r"arXiv:(\d{4}\.\d{4,5})")
MAX_AUTHORS = 7  # longer author lists give the first six and "et al."


def notebooks() -> list[Path]:
    return sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("appendix/*.ipynb")])


def _text(cell: dict) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def cited(cells: list[dict]) -> list[str]:
    """The keys the notebook's Markdown links to (the generated list left out), in the
    list's order: papers by author and year, then the source notes in the bib's
    order."""
    markdown = [_text(c) for c in cells if c["cell_type"] == "markdown"]
    text = "\n".join(BLOCK.sub("", m) for m in markdown)
    keys = set(ANCHOR_LINK.findall(text))
    unknown = sorted(keys - set(entries()))
    if unknown:
        raise KeyError(f"citation keys not in references.bib: {', '.join(unknown)}")
    order = list(entries())
    return sorted(keys, key=lambda k: (is_notes(k), is_notes(k) and order.index(k),
                                       _authors(k).lower(), entries()[k].fields["year"],
                                       k))


def _initials(names: list[str]) -> str:
    """``["Jeffrey", "L."]`` -> ``J. L.``; ``["Tie-Yan"]`` -> ``T.-Y.``"""
    return " ".join("-".join(part[0] + "." for part in plain(name).split("-") if part)
                    for name in names)


def _person(person) -> str:
    last = plain(" ".join(person.prelast_names + person.last_names))
    first = _initials(person.first_names + person.middle_names)
    lineage = plain(" ".join(person.lineage_names))
    return ", ".join(part for part in (last, first, lineage) if part)


def _authors(key: str) -> str:
    people = entries()[key].persons.get("author", [])
    if is_notes(key):
        return plain(" ".join(people[0].last_names))
    names = [_person(p) for p in people]
    if names[-1] == "others":  # "and others" in the bib
        return ", ".join(names[:-1]) + ", et al."
    if len(names) > MAX_AUTHORS:
        return ", ".join(names[:6]) + ", et al."
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + ", & " + names[-1]


def _pages(fields) -> str:
    return plain(fields.get("pages", "")).replace("--", "–").replace("-", "–")


def _venue(entry) -> str:
    fields, kind = entry.fields, entry.type.lower()
    pages = _pages(fields)
    if kind == "article":
        venue = f"*{plain(fields['journal'])}*"
        if "volume" in fields:
            venue += f", {plain(fields['volume'])}"
            if "number" in fields:
                venue += f"({plain(fields['number'])})"
        return venue + (f", {pages}" if pages else "")
    if kind == "inproceedings":
        pages = f" (pp. {pages})" if pages else ""
        return f"In *{plain(fields['booktitle'])}*{pages}"
    if kind == "techreport":
        number = f" {plain(fields['number'])}" if "number" in fields else ""
        return f"Technical report{number}, {plain(fields['institution'])}"
    parts = [URL.sub("", fields.get("howpublished", "")), fields.get("note", "")]
    return "; ".join(p for p in (plain(p).strip(" ,") for p in parts) if p)


def _links(entry) -> list[str]:
    fields = entry.fields
    links = []
    if "doi" in fields:
        links.append(f"[doi:{fields['doi']}](https://doi.org/{fields['doi']})")
    urls = [fields["url"]] if "url" in fields else []
    urls += URL.findall(fields.get("howpublished", ""))
    links += [f"<{url}>" for url in urls]
    links += [f"[arXiv:{n}](https://arxiv.org/abs/{n})"
              for n in ARXIV.findall(fields.get("journal", ""))]
    return links


def entry_markdown(key: str) -> str:
    """One list item: the anchor, then author-year, title, venue and links."""
    entry = entries()[key]
    title = plain(entry.fields["title"]).strip().rstrip(".")
    if entry.type.lower() not in ("article", "inproceedings"):
        title = f"*{title}*"
    year = plain(entry.fields["year"])
    stop = "" if title.endswith(("?", "!")) else "."
    parts = [f"{_authors(key)} ({year}).", f"{title}{stop}"]
    venue = _venue(entry)
    if venue:
        parts.append(f"{venue}.")
    parts += _links(entry)
    return f'- <a id="{key}"></a>' + " ".join(parts)


def block(keys: list[str]) -> str:
    return "\n".join([START, "", *map(entry_markdown, keys), "", END])


def with_references(nb: dict) -> dict:
    """The notebook with its References cell last and that cell's list up to date."""
    cells = list(nb["cells"])
    keys = cited(cells)
    headed = [i for i, c in enumerate(cells)
              if c["cell_type"] == "markdown" and HEADING.search(_text(c))]
    at = headed[-1] if headed else None
    if at is None:
        if not keys:
            return nb
        cell = {"cell_type": "markdown", "id": "references", "metadata": {},
                "source": "## References\n"}
    else:
        cell = cells.pop(at)
        before, heading, after = _text(cell).partition("## References")
        if before.strip():  # the heading closes a longer cell: give it a cell of its own
            cells.insert(at, {**cell, "source": before.rstrip("\n").splitlines(True)})
            cell = {**cell, "id": "references", "source": heading + after}
    text = _text(cell)
    new = block(keys) if keys else ""
    if BLOCK.search(text):
        text = BLOCK.sub(lambda _: new, text).rstrip("\n")
    elif new:
        text = text.rstrip("\n") + "\n\n" + new
    cell = {**cell, "source": text.splitlines(keepends=True)}
    return {**nb, "cells": [*cells, cell]}


def dumps(nb: dict) -> str:
    """The notebooks' formatting: one-space indent, UTF-8 as it is, a final newline."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def stale(path: Path) -> bool:
    text = path.read_text()
    return dumps(with_references(json.loads(text))) != text


def write(path: Path) -> bool:
    """Bring the notebook's References cell up to date; whether it changed."""
    text = path.read_text()
    new = dumps(with_references(json.loads(text)))
    if new != text:
        path.write_text(new)
    return new != text


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"] or notebooks()
    if check:
        bad = [str(p) for p in paths if stale(p)]
        for name in bad:
            print(f"{name}: its References list is stale: "
                  "run python tools/chapter_references.py")
        return 1 if bad else 0
    for path in paths:
        if write(path):
            print(f"wrote the references of {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
