"""Open every chapter in JupyterLab with jupyterlab-myst, as a reader on Binder would.

Each rendered chapter must have: every Markdown cell rendered, no maths error (jupyterlab-myst
typesets with KaTeX), no MyST markup shown as text, no citation shown as a bare BibTeX key
(citations are author-year links to the references page), and every solution folded.
"""

from __future__ import annotations

import re
import sys

import pytest

from layout import RAW_MARKUP, ROOT, chapter_notebooks, markdown_of

sys.path.insert(0, str(ROOT / "_ext"))
from portable_markdown import bib_keys  # noqa: E402 - the book's own reading of the keys

BIB_KEYS = sorted(bib_keys(ROOT / "references.bib"))

CHAPTERS = chapter_notebooks()

RENDERED = """
const cells = document.querySelectorAll(".jp-Notebook .jp-MarkdownCell");
const outputs = document.querySelectorAll(".jp-Notebook .jp-MarkdownCell .myst");
return [cells.length, outputs.length];
"""

REPORT = """
const outputs = Array.from(
  document.querySelectorAll(".jp-Notebook .jp-MarkdownCell .myst"));
const text = outputs.map(o => o.innerText).join("\\n");
const details = outputs.flatMap(o => Array.from(o.querySelectorAll("details")));
return {
  text: text,
  errors: outputs.flatMap(o => Array.from(
      o.querySelectorAll(".katex-error, mjx-merror, .myst-error, .text-red-500")))
    .map(e => (e.getAttribute("title") || e.textContent).slice(0, 120)),
  katex: outputs.reduce((n, o) => n + o.querySelectorAll(".katex").length, 0),
  details: details.length,
  open: details.filter(d => d.open).map(d => d.innerText.slice(0, 60)),
};
"""


def wait_until_rendered(browser, expected: int, seconds: float = 120.0) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    def done(driver):
        cells, outputs = driver.execute_script(RENDERED)
        return cells == expected and outputs == expected

    WebDriverWait(browser, seconds, poll_frequency=0.5).until(
        done, message=f"JupyterLab did not render all {expected} Markdown cells")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_reads_in_jupyterlab(browser, lab_url, path):
    markdown = markdown_of(path)
    browser.get(f"{lab_url}/lab/tree/chapters/{path.name}?reset")
    wait_until_rendered(browser, len(markdown))
    report = browser.execute_script(REPORT)

    assert report["errors"] == [], f"{path.stem}: maths or MyST errors: {report['errors']}"
    assert report["katex"] > 0, f"{path.stem}: no equation was typeset"
    raw = [m for m in RAW_MARKUP if m in report["text"]]
    assert raw == [], f"{path.stem}: MyST markup shown as text in JupyterLab: {raw}"
    bare = [k for k in BIB_KEYS if re.search(rf"\b{k}\b", report["text"])]
    assert bare == [], f"{path.stem}: citations shown as bare keys in JupyterLab: {bare}"
    solutions = sum(m.count("<details>") for m in markdown)
    assert report["details"] == solutions > 0, (
        f"{path.stem}: {report['details']} folded blocks rendered, {solutions} in the source")
    assert report["open"] == [], f"{path.stem}: solutions shown unfolded: {report['open']}"
