"""What the built book offers to download is there and is what it says
(_ext/downloads.py).

- Every page's download menu holds only links that the served book answers: a notebook
  page's ``.ipynb`` is that page's notebook (the same cells as in the repository), and
  every page's ``.pdf`` is the whole book.
- The PDF (``make pdf``, tools/book_pdf.py) has every chapter in its text, its outline
  and its contents (with the page each starts on), no raw LaTeX outside code, every line
  of code and printed output of the chapters whole (not cut at the right edge), and a
  page count and size in a sane range.
- Every assignment page links its student handout: a zip of the student folder that
  ``make assignments`` writes (the notebook and the ``checks.py`` it imports), which
  tests/assignments/test_assignments.py finds free of solutions and hidden tests.

``make test`` builds the PDF and the handouts before the book, as the publishing
workflow does.
"""

from __future__ import annotations

import functools
import io
import json
import re
import subprocess
import urllib.request
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import pytest

from conftest import HTML
from layout import ROOT, chapter_notebooks, markdown_of, toc_files

PAGES = toc_files()
HANDOUTS = ROOT / "_build" / "assignments"  # NAME/student/, written by make assignments
ASSIGNMENTS = [p for p in PAGES if p.startswith("assignments/pages/")
               and (ROOT / "assignments" / f"{Path(p).name}.ipynb").is_file()]
PDF_PAGES = (250, 800)
PDF_MAX_BYTES = 20 * 2**20
DOWNLOADS_MAX_BYTES = 36 * 2**20  # the notebooks (2 MB each at most), PDF and handouts
RAW_LATEX = re.compile(r"\\[A-Za-z]{2,}|\$\$|\\[()\[\]]")
"""What MathJax leaves when it fails: TeX commands, ``$$`` and ``\\(`` delimiters."""
OTTER_MARKERS = re.compile(r"# (?:BEGIN |END )?SOLUTION|# HIDDEN")
MENU_ENTRY = re.compile(r"btn-download-\w+-button")
MONOSPACE = re.compile(r"mono|courier|consol", re.I)


class _Links(HTMLParser):
    """Each ``<a>`` of a page with its classes, link and text."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict] = []
        self._open: dict | None = None

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "a":
            self._open = dict(attrs, text="")
            self.links.append(self._open)

    def handle_endtag(self, tag) -> None:
        if tag == "a":
            self._open = None

    def handle_data(self, data) -> None:
        if self._open is not None:
            self._open["text"] += data


@functools.cache
def fetch(url: str) -> bytes:
    """The body of ``url``; an HTTP error (a link that finds nothing) fails the test."""
    with urllib.request.urlopen(url, timeout=60) as response:
        assert response.status == 200, url
        return response.read()


def links(url: str) -> list[dict]:
    parser = _Links()
    parser.feed(fetch(url).decode())
    return parser.links


def download_menu(url: str) -> dict[str, str]:
    """The download menu of the page at ``url``: entry (".ipynb", ".pdf") -> link."""
    return {a["text"].strip(): urljoin(url, a["href"]) for a in links(url)
            if "href" in a and MENU_ENTRY.search(a.get("class", ""))}


def cells(notebook: dict) -> list[tuple[str, str]]:
    return [(c["cell_type"], "".join(c["source"])) for c in notebook["cells"]]


def chapter_title(notebook: Path) -> str:
    return markdown_of(notebook)[0].splitlines()[0].lstrip("# ").strip()


@pytest.mark.parametrize("page", PAGES)
def test_download_menu_links_resolve(book_url, page):
    url = f"{book_url}/{page}.html"
    menu = download_menu(url)
    notebook = ROOT / f"{page}.ipynb"
    assert set(menu) == ({".ipynb", ".pdf"} if notebook.is_file() else {".pdf"}), menu
    assert fetch(menu[".pdf"]).startswith(b"%PDF-")
    if notebook.is_file():
        served = json.loads(fetch(menu[".ipynb"]))
        assert cells(served) == cells(json.loads(notebook.read_text())), (
            f"{menu['.ipynb']} is not {notebook.relative_to(ROOT)}")


@pytest.fixture(scope="module")
def pdf(book_url, tmp_path_factory) -> Path:
    """The whole book's PDF, as the front page's download menu serves it."""
    path = tmp_path_factory.mktemp("pdf") / "book.pdf"
    path.write_bytes(fetch(download_menu(f"{book_url}/intro.html")[".pdf"]))
    return path


def run(*command: str) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def pdf_xml(pdf) -> ET.Element:
    """The PDF's text with its fonts, and its outline (poppler's pdftohtml)."""
    return ET.fromstring(run("pdftohtml", "-xml", "-i", "-stdout", "-q", str(pdf)))


def flat(text: str) -> str:
    return " ".join(text.split())


def test_pdf_has_every_chapter_in_its_text_outline_and_contents(pdf, pdf_xml):
    pages = run("pdftotext", "-layout", str(pdf), "-").split("\f")
    outline = [flat("".join(item.itertext())) for item in pdf_xml.iter("item")]
    contents = {}
    for line in "\n".join(pages[:4]).splitlines():
        match = re.match(r"\s*(?:\d+\.\s+)?(.+?)\s{2,}(\d+)\s*$", line)
        if match:
            contents[flat(match.group(1))] = int(match.group(2))
    for notebook in chapter_notebooks():
        title = chapter_title(notebook)
        assert any(title in entry for entry in outline), f"{title!r} not in the outline"
        assert title in contents, f"{title!r} not in the contents: {sorted(contents)}"
        start = flat(pages[contents[title] - 1])
        assert title in start[:200], (
            f"{title!r} is not on page {contents[title]}: {start[:200]!r}")


def test_pdf_has_no_raw_latex_outside_code(pdf_xml):
    fonts = {f.get("id"): f.get("family", "") for f in pdf_xml.iter("fontspec")}
    raw = []
    for page in pdf_xml.iter("page"):
        for text in page.iter("text"):
            content = "".join(text.itertext())
            code = MONOSPACE.search(fonts[text.get("font")])
            if not code and RAW_LATEX.search(content):
                raw.append(f"page {page.get('number')}: {content[:80]}")
    assert raw == [], f"{len(raw)} lines with raw LaTeX, e.g. {raw[:5]}"


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def shown_code(notebook: Path) -> list[str]:
    """The lines of code and of printed output that the book shows of a notebook."""
    lines = []
    for cell in json.loads(notebook.read_text())["cells"]:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell["cell_type"] != "code" or tags & {"remove-cell", "hide-cell"}:
            continue
        if not tags & {"hide-input", "remove-input"}:
            lines += "".join(cell["source"]).splitlines()
        if not tags & {"hide-output", "remove-output"}:
            lines += ["".join(out["text"]) for out in cell.get("outputs", [])
                      if out["output_type"] == "stream"]
    return [squeezed(line) for line in "\n".join(lines).splitlines() if line.strip()]


def test_pdf_shows_every_line_of_code_whole(pdf_xml):
    # Chromium leaves out what a box cuts at its edge, so a cut line is a line whose end
    # is missing from the PDF's monospace text (where wrapped lines join up again)
    fonts = {f.get("id"): f.get("family", "") for f in pdf_xml.iter("fontspec")}
    code = squeezed("".join("".join(text.itertext()) for text in pdf_xml.iter("text")
                            if MONOSPACE.search(fonts[text.get("font")])))
    cut = {notebook.stem: missing for notebook in chapter_notebooks()
           if (missing := [line for line in shown_code(notebook) if line not in code])}
    assert cut == {}, f"code cut or missing in the PDF: {cut}"


def test_pdf_page_count_and_size(pdf):
    pages = int(re.search(r"Pages:\s+(\d+)", run("pdfinfo", str(pdf))).group(1))
    assert PDF_PAGES[0] <= pages <= PDF_PAGES[1], f"{pages} pages"
    assert pdf.stat().st_size <= PDF_MAX_BYTES, f"{pdf.stat().st_size / 2**20:.1f} MiB"


def test_downloads_stay_within_budget():
    files = [p for p in (HTML / "downloads").rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    assert total <= DOWNLOADS_MAX_BYTES, f"the downloads take {total / 2**20:.1f} MiB"


@pytest.mark.parametrize("page", ASSIGNMENTS)
def test_assignment_page_links_its_student_handout(book_url, page):
    name = Path(page).name
    url = f"{book_url}/{page}.html"
    handouts = [urljoin(url, a["href"]) for a in links(url)
                if "handout" in a.get("class", "").split()]
    assert len(handouts) == 1, f"{page} links {len(handouts)} handouts"
    archive = zipfile.ZipFile(io.BytesIO(fetch(handouts[0])))
    served = {item: archive.read(item) for item in archive.namelist()}
    assert set(served) == {f"{name}/{name}.ipynb", f"{name}/checks.py"}, sorted(served)
    # the folder that tests/assignments/test_assignments.py finds free of every solution
    # line and hidden test; here only otter's markers, which no handout may hold
    student = HANDOUTS / name / "student"
    assert served == {f"{name}/{path.name}": path.read_bytes()
                      for path in student.iterdir()}, f"{handouts[0]} is not {student}"
    markers = OTTER_MARKERS.findall(served[f"{name}/{name}.ipynb"].decode())
    assert markers == [], f"{handouts[0]} holds solutions or hidden tests: {markers}"
