"""Give the book's portable Markdown its boxes back in the HTML build.

Chapters are read in four places (the HTML book, JupyterLab with jupyterlab-myst, Colab and
plain renderers such as GitHub or ``nbconvert``), so they use only Markdown that all four
understand. A box is written as a block quote whose first words are bold::

    > **Erratum (the CMU 11-785 notes).** The notes print ...

Every renderer shows that as a quotation; this extension turns it into a Sphinx admonition in
the HTML book: a warning box for "Erratum ...", a note box for "Note ...", with the bold words
as its title ("Convention ..." is a note box too: a notation of the source notes
that differs from the book's but is consistent). (Solutions are ``<details>`` elements, which
every renderer folds already.)

Citations are author-year links to the references page, which every renderer follows::

    as [Vaswani et al. (2017)](../references.md#vaswani2017) show

The references page gives every entry the id of its BibTeX key (``bibtex_cite_id`` in
``_config.yml``), which MyST does not know about; this extension turns such a link into a plain
link to that entry, and warns (an error under ``-W``) when the key is not in ``references.bib``.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
REFERENCES = "references"  # the page holding the bibliography

BOXES = {"Erratum": "warning", "Note": "note", "Convention": "note"}


def _lead(quote: nodes.block_quote) -> nodes.strong | None:
    """The bold words that open the quote's first paragraph (empty text before them skipped)."""
    first = quote.children[0] if quote.children else None
    if not isinstance(first, nodes.paragraph):
        return None
    for child in first.children:
        if isinstance(child, nodes.Text) and not child.astext().strip():
            continue
        return child if isinstance(child, nodes.strong) else None
    return None


def _box_class(quote: nodes.block_quote) -> str | None:
    lead = _lead(quote)
    if lead is None:
        return None
    word = lead.astext().split(" ", 1)[0].rstrip(".:")
    return BOXES.get(word)


def quotes_to_admonitions(app: Sphinx, doctree: nodes.document) -> None:
    """Replace each block quote that opens with a bold box word by an admonition."""
    for quote in list(doctree.findall(nodes.block_quote)):
        kind = _box_class(quote)
        if kind is None:
            continue
        paragraph = quote.children[0]
        lead = _lead(quote)
        title = nodes.title("", "", *lead.children)
        if title.children and isinstance(title.children[-1], nodes.Text):
            title.children[-1] = nodes.Text(str(title.children[-1]).rstrip(" .:"))
        paragraph.remove(lead)
        while paragraph.children and isinstance(paragraph.children[0], nodes.Text):
            rest = paragraph.children[0].astext().lstrip()
            if rest:
                paragraph.children[0] = nodes.Text(rest)
                break
            paragraph.remove(paragraph.children[0])
        box = nodes.admonition("", title, classes=["admonition", kind])
        for child in list(quote.children):
            if child is paragraph and not paragraph.astext().strip():
                continue
            box += child
        quote.replace_self(box)


def bib_keys(bib: Path) -> set[str]:
    """The keys of the entries of a BibTeX file."""
    return set(re.findall(r"^@\w+\{([^,\s]+),", bib.read_text(), re.MULTILINE))


def citation_links(app: Sphinx, doctree: nodes.document) -> None:
    """Links to ``references.md#<key>`` point at the bibliography entry ``<key>``."""
    keys = bib_keys(Path(app.srcdir) / "references.bib")
    for xref in list(doctree.findall(pending_xref)):
        if xref.get("reftype") != "myst" or xref.get("reftarget") != REFERENCES:
            continue
        key = xref.get("reftargetid")
        if not key:
            continue
        if key not in keys:
            LOGGER.warning(f"citation link to unknown key {key!r} (not in references.bib)",
                           location=xref)
            continue
        uri = app.builder.get_relative_uri(xref["refdoc"], REFERENCES) + "#" + key
        link = nodes.reference("", "", internal=True, refuri=uri, classes=["citation-link"])
        link.extend(xref.children)
        xref.replace_self(link)


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", quotes_to_admonitions)
    app.connect("doctree-read", citation_links)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
