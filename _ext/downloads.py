"""Every page's download menu offers only files that the book holds, and it holds them.

sphinx-book-theme's menu links ``.ipynb`` and ``.md`` to ``_sources/``, which the build
does not write (``html_copy_source: false``: no copy of every source), and ``.pdf`` to
the browser's print dialog. Here, after the theme has filled the menu:

- a notebook page's ``.ipynb`` links to ``downloads/<page>.ipynb``, a copy of the page's
  own notebook, outputs included (only the notebooks are copied, not every source);
- a Markdown page offers no source (its MyST text is of no use outside the book);
- ``.pdf`` links to the whole book, ``downloads/sequence-learning-executed.pdf``, when
  ``make pdf`` has built it (``_build/pdf/``), and is left out otherwise.

The student handouts of the assignments, built by ``make assignments`` into
``_build/assignments/NAME/student/``, are zipped into
``downloads/assignments/NAME.zip``; each assignment page links its own. The publishing
workflow (.github/workflows/book.yml) and ``make test`` build the PDF and the handouts
before the book; tests/book/test_downloads.py checks that every link resolves.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
FOLDER = "downloads"  # in the book's root; tests/book/test_build_size.py leaves it out
PDF_NAME = "sequence-learning-executed.pdf"
PDF_BUILT = Path("_build") / "pdf" / PDF_NAME  # where `make pdf` writes it
HANDOUTS_BUILT = Path("_build") / "assignments"  # NAME/student/: `make assignments`
MENU = "download-buttons"
HTML_BUILDERS = ("html", "dirhtml")


def pdf_source(app: Sphinx) -> Path:
    return Path(app.srcdir) / PDF_BUILT


def _record_what_exists(app: Sphinx, config) -> None:
    # An "html" config value: when the PDF appears or goes, every page is written again.
    config.downloads_pdf = pdf_source(app).is_file()


def _shape_menu(app: Sphinx, pagename: str, templatename: str, context: dict,
                doctree) -> None:
    if app.builder.name not in HTML_BUILDERS:
        return
    buttons = context.get("header_buttons", [])
    menu = next((b for b in buttons if b.get("label") == MENU), None)
    if menu is None:
        return
    pathto = context["pathto"]
    entries = []
    if context.get("page_source_suffix") == ".ipynb":
        entries.append({
            "type": "link", "url": pathto(f"{FOLDER}/{pagename}.ipynb", 1),
            "text": ".ipynb", "icon": "fas fa-code",
            "tooltip": "Download this page as a notebook",
            "label": "download-notebook-button",
        })
    if app.config.downloads_pdf:
        entries.append({
            "type": "link", "url": pathto(f"{FOLDER}/{PDF_NAME}", 1),
            "text": ".pdf", "icon": "fas fa-file-pdf",
            "tooltip": "Download the whole book as a PDF",
            "label": "download-pdf-button",
        })
    if entries:
        menu["buttons"] = entries
    else:
        buttons.remove(menu)


def notebook_pages(app: Sphinx) -> list[str]:
    """Every page of the book whose source is a notebook."""
    return sorted(doc for doc in app.env.found_docs
                  if Path(app.env.doc2path(doc)).suffix == ".ipynb")


def zip_handout(student: Path, target: Path) -> None:
    """The student folder of one assignment as ``NAME/...`` in a zip, byte for byte the
    same for the same files (fixed timestamps)."""
    name = target.stem
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in student.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{name}/{path.relative_to(student).as_posix()}",
                                   date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())


def _copy_downloads(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name not in HTML_BUILDERS:
        return
    src, out = Path(app.srcdir), Path(app.outdir) / FOLDER
    shutil.rmtree(out, ignore_errors=True)
    for doc in notebook_pages(app):
        (out / doc).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(app.env.doc2path(doc), out / f"{doc}.ipynb")
    if app.config.downloads_pdf:
        shutil.copy2(pdf_source(app), out / PDF_NAME)
    handouts = sorted((src / HANDOUTS_BUILT).glob("*/student"))
    for student in handouts:
        (out / "assignments").mkdir(parents=True, exist_ok=True)
        zip_handout(student, out / "assignments" / f"{student.parent.name}.zip")
    built = {"the PDF (make pdf)": app.config.downloads_pdf,
             "the handouts (make assignments)": bool(handouts)}
    missing = [what for what, done in built.items() if not done]
    if missing:
        LOGGER.info("downloads: not built, so not in the book: %s", "; ".join(missing))


def setup(app: Sphinx) -> dict:
    app.add_config_value("downloads_pdf", False, "html")
    app.connect("config-inited", _record_what_exists)
    app.connect("html-page-context", _shape_menu, priority=600)
    app.connect("build-finished", _copy_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
