"""Open every chapter in JupyterLab with jupyterlab-myst, as a reader on Binder would.

Each rendered chapter must have: every Markdown cell rendered, no maths error (jupyterlab-myst
typesets with KaTeX), no MyST markup shown as text, no citation shown as a bare BibTeX key,
every box (a GitHub alert) shown as an admonition and every solution (``:::{dropdown}``)
folded. One chapter is then read as a student would: a solution opened shows typeset maths, a
box shows its title, and a citation leads to its entry in the chapter's References list.
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
ALERT = re.compile(r"^> \[!(NOTE|WARNING)\]$", re.MULTILINE)

RENDERED = """
const cells = document.querySelectorAll(".jp-Notebook .jp-MarkdownCell");
const outputs = document.querySelectorAll(".jp-Notebook .jp-MarkdownCell .myst");
return [cells.length, outputs.length];
"""

REPORT = """
const outputs = Array.from(
  document.querySelectorAll(".jp-Notebook .jp-MarkdownCell .myst"));
const text = outputs.map(o => o.innerText).join("\\n");
const all = selector => outputs.flatMap(o => Array.from(o.querySelectorAll(selector)));
const details = all("details");
return {
  text: text,
  errors: all(".katex-error, mjx-merror, .myst-error, .text-red-500")
    .map(e => (e.getAttribute("title") || e.textContent).slice(0, 120)),
  katex: all(".katex").length,
  dropdowns: all("details.myst-dropdown").length,
  details: details.length,
  open: details.filter(d => d.open).map(d => d.innerText.slice(0, 60)),
  boxes: all("aside.myst-admonition").length,
  quotes: all("blockquote").map(q => q.innerText.slice(0, 60)),
};
"""


def wait_until_rendered(browser, expected: int, seconds: float = 120.0) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    def done(driver):
        cells, outputs = driver.execute_script(RENDERED)
        return cells == expected and outputs == expected

    WebDriverWait(browser, seconds, poll_frequency=0.5).until(
        done, message=f"JupyterLab did not render all {expected} Markdown cells")


def open_chapter(browser, lab_url, path) -> list[str]:
    markdown = markdown_of(path)
    browser.get(f"{lab_url}/lab/tree/chapters/{path.name}?reset")
    wait_until_rendered(browser, len(markdown))
    return markdown


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_reads_in_jupyterlab(browser, lab_url, path):
    markdown = open_chapter(browser, lab_url, path)
    report = browser.execute_script(REPORT)

    assert report["errors"] == [], f"{path.stem}: maths or MyST errors: {report['errors']}"
    assert report["katex"] > 0, f"{path.stem}: no equation was typeset"
    raw = [m for m in RAW_MARKUP if m in report["text"]]
    assert raw == [], f"{path.stem}: MyST markup shown as text in JupyterLab: {raw}"
    bare = [k for k in BIB_KEYS if re.search(rf"\b{k}\b", report["text"])]
    assert bare == [], f"{path.stem}: citations shown as bare keys in JupyterLab: {bare}"
    solutions = sum(m.count(":::{dropdown} Solution\n") for m in markdown)
    assert report["dropdowns"] == report["details"] == solutions > 0, (
        f"{path.stem}: {report['dropdowns']} dropdowns rendered, {solutions} in the source")
    assert report["open"] == [], f"{path.stem}: solutions shown unfolded: {report['open']}"
    boxes = sum(len(ALERT.findall(m)) for m in markdown)
    assert report["boxes"] == boxes, f"{path.stem}: {report['boxes']} of {boxes} boxes shown"
    assert report["quotes"] == [], f"{path.stem}: quotations left: {report['quotes']}"


READER = "self_attention"  # a chapter with erratum and note boxes, maths in its
# solutions and citations (the attention chapter has no erratum box left: its two were
# withdrawn in the fourth edition)

OPEN_SOLUTION = """
const solution = Array.from(document.querySelectorAll(
  ".jp-MarkdownCell .myst details.myst-dropdown"))[arguments[0]];
const summary = solution.querySelector("summary");
const cursor = getComputedStyle(summary).cursor;
summary.click();
return {open: solution.open, cursor: cursor, title: summary.innerText.trim(),
        katex: solution.querySelectorAll(".katex").length,
        text: solution.innerText};
"""

BOX = """
const box = document.querySelector(".jp-MarkdownCell .myst aside.myst-admonition-warning");
if (!box) return null;
const body = box.querySelector(".myst-admonition-body");
const lead = body.querySelector("p > strong:first-child");
const note = document.querySelector(".jp-MarkdownCell .myst aside.myst-admonition-note");
return {header: box.querySelector(".myst-admonition-header").innerText.trim(),
        title: lead ? lead.innerText : "", colour: getComputedStyle(box).borderLeftColor,
        note: note ? getComputedStyle(note).borderLeftColor : null,
        in_quote: box.closest("blockquote") !== null};
"""

WHERE = """
const entry = document.querySelector(
  `.jp-MarkdownCell [data-jupyter-id="${arguments[0]}"], .jp-MarkdownCell #${arguments[0]}`);
if (!entry) return null;
const item = entry.closest("li").getBoundingClientRect();
return {top: item.top, bottom: item.bottom, height: window.innerHeight,
        hash: location.hash, text: entry.closest("li").innerText};
"""


def visible(where: dict) -> bool:
    return 0 <= where["top"] and where["bottom"] <= where["height"]


def test_a_reader_opens_a_solution_sees_a_box_and_follows_a_citation(browser, lab_url):
    path = ROOT / "chapters" / f"{READER}.ipynb"
    markdown = open_chapter(browser, lab_url, path)

    solutions = [s for m in markdown for s in m.split(":::{dropdown} Solution\n")[1:]]
    first = next((i for i, s in enumerate(solutions) if "$" in s.split("\n:::")[0]), None)
    assert first is not None, f"{READER}: no :::{{dropdown}} Solution with maths"
    opened = browser.execute_script(OPEN_SOLUTION, first)
    assert opened["open"] and opened["title"] == "Solution", opened
    assert opened["cursor"] == "pointer", f"'Solution' does not look clickable: {opened}"
    assert opened["katex"] > 0 and "$" not in opened["text"], (
        f"maths inside an opened solution is not typeset: {opened['text'][:300]}")

    box = browser.execute_script(BOX)
    assert box is not None, f"{READER}: no erratum shown as a warning box"
    assert box["header"] == "Warning" and box["title"].startswith("Erratum ("), box
    assert not box["in_quote"], f"a box rendered as a quotation: {box}"
    assert box["note"] not in (None, box["colour"]), f"a note box and an erratum alike: {box}"

    key = re.search(r"\]\(#([\w-]+)\)", markdown[0]).group(1)
    before = browser.execute_script(WHERE, key)
    assert before is not None, f"no entry with the anchor {key!r} in the rendered chapter"
    assert not visible(before), f"the entry {key!r} is on screen before the link is followed"
    link = browser.find_element("css selector", f'.jp-MarkdownCell .myst a[href="#{key}"]')
    link.click()
    after = browser.execute_script(WHERE, key)
    assert after["hash"] == f"#{key}" and visible(after), (
        f"following the citation of {key!r} did not bring its entry on screen: {after}")
    assert re.search(r"\(\d{4}\)\.", after["text"]), after["text"]
