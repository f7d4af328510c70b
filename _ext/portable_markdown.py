"""Give the book's portable Markdown its boxes and citation links in the HTML build.

Chapters are read in the HTML book, in JupyterLab with jupyterlab-myst, on Colab and in
plain renderers such as GitHub or ``nbconvert``, so they use Markdown that all of them
read. A box is a GitHub alert whose first words are bold, its title::

    > [!WARNING]
    > **Erratum (the CMU 11-785 notes): the gradient is transposed.** The notes ...

GitHub and jupyterlab-myst show that as a coloured box ("Warning", "Note"), Colab and
``nbconvert`` as a quotation. This extension turns it into a Sphinx admonition of the
alert's kind (``[!WARNING]`` a warning box, ``[!NOTE]`` a note box) titled with the bold
words: an erratum is a warning; a note, or a convention (a notation of the source notes
that differs from the book's but is consistent), is a note. (Solutions are
``:::{dropdown}`` directives, which sphinx-design renders in the book.)

Citations are author-year links. A notebook links to the entry in its own References
list, whose ``<a id="key">`` anchor every renderer keeps
(``tools/chapter_references.py`` writes the list)::

    as [Vaswani et al. (2017)](#vaswani2017) show

and a Markdown page links to the references page, which gives every entry the id of its
BibTeX key (``bibtex_cite_id`` in ``_config.yml``)::

    as [Vaswani et al. (2017)](../references.md#vaswani2017) show

MyST knows neither target; this extension turns such a link into a plain link to the
entry, and warns (an error under ``-W``) when the key is not in ``references.bib`` or
the page has no entry with that anchor.
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

ALERT = re.compile(r"\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*$")
"""GitHub's alert kinds, each a Sphinx admonition class too (``[!WARNING]``: warning)"""
ANCHOR = re.compile(r'<a id="([\w-]+)">')


def _alert(quote: nodes.block_quote) -> str | None:
    """The kind of a GitHub alert (``[!NOTE]`` alone on the quote's first line)."""
    first = quote.children[0] if quote.children else None
    if not isinstance(first, nodes.paragraph) or not first.children:
        return None
    head = first.children[0]
    match = ALERT.match(head.astext()) if isinstance(head, nodes.Text) else None
    return match.group(1).lower() if match else None


def _drop_blank_text(paragraph: nodes.paragraph) -> None:
    """Remove the whitespace that opens a paragraph (the line break after the alert)."""
    while paragraph.children and isinstance(paragraph.children[0], nodes.Text):
        rest = paragraph.children[0].astext().lstrip()
        if rest:
            paragraph.children[0] = nodes.Text(rest)
            return
        paragraph.remove(paragraph.children[0])


def alerts_to_admonitions(app: Sphinx, doctree: nodes.document) -> None:
    """Replace each GitHub alert by an admonition titled with its bold first words."""
    for quote in list(doctree.findall(nodes.block_quote)):
        kind = _alert(quote)
        if kind is None:
            continue
        paragraph = quote.children[0]
        paragraph.remove(paragraph.children[0])
        _drop_blank_text(paragraph)
        lead = paragraph.children[0] if paragraph.children else None
        if isinstance(lead, nodes.strong):
            title = nodes.title("", "", *lead.children)
            if isinstance(title.children[-1], nodes.Text):
                title.children[-1] = nodes.Text(str(title.children[-1]).rstrip(" .:"))
            paragraph.remove(lead)
            _drop_blank_text(paragraph)
        else:
            title = nodes.title("", kind.capitalize())
        box = nodes.admonition("", title, classes=["admonition", kind])
        for child in list(quote.children):
            if child is paragraph and not paragraph.astext().strip():
                continue
            box += child
        quote.replace_self(box)


def bib_keys(bib: Path) -> set[str]:
    """The keys of the entries of a BibTeX file."""
    return set(re.findall(r"^@\w+\{([^,\s]+),", bib.read_text(), re.MULTILINE))


def _cited_key(xref: pending_xref) -> str | None:
    """The key of a citation link: ``#key`` in the page, or ``references.md#key``."""
    if xref.get("reftype") != "myst":
        return None
    if xref.get("reftarget") == REFERENCES:
        return xref.get("reftargetid") or None
    target = xref.get("reftarget", "")
    if xref.get("refdomain") is None and re.fullmatch(r"[\w-]+", target):
        return target
    return None


def citation_links(app: Sphinx, doctree: nodes.document) -> None:
    """Citation links point at the bibliography entry ``<key>``: in the page's own
    References list (``#key``) or on the references page (``references.md#key``)."""
    keys = bib_keys(Path(app.srcdir) / "references.bib")
    anchors = {key for raw in doctree.findall(nodes.raw)
               for key in ANCHOR.findall(raw.astext())}
    for xref in list(doctree.findall(pending_xref)):
        key = _cited_key(xref)
        if key is None:
            continue
        if key not in keys:
            LOGGER.warning(f"citation link to unknown key {key!r} (not in "
                           "references.bib)", location=xref)
            continue
        if xref.get("reftarget") == REFERENCES:
            uri = app.builder.get_relative_uri(xref["refdoc"], REFERENCES) + "#" + key
        elif key in anchors:
            uri = "#" + key
        else:
            LOGGER.warning(f"citation link to {key!r}, which this page's References "
                           "list lacks (run python tools/chapter_references.py)",
                           location=xref)
            continue
        link = nodes.reference("", "", internal=True, refuri=uri,
                               classes=["citation-link"])
        link.extend(xref.children)
        xref.replace_self(link)


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", alerts_to_admonitions)
    app.connect("doctree-read", citation_links)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
