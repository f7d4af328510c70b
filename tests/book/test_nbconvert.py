"""Plain renderers: every chapter as `jupyter nbconvert --to html` shows it (GitHub and Colab
render Markdown the same way: no MyST).

Each page must typeset every equation without error and show no MyST directive as a code
block. What plain renderers cannot fold or box reads as text: a solution, ``:::{dropdown}
Solution``, shows its fence lines around it (the trade-off CONTRIBUTING.md states), and a box,
a GitHub alert, is a quotation opening with ``[!WARNING]`` or ``[!NOTE]``. nbconvert's page
loads MathJax 2; the test serves the copy shipped by jupyter-server-mathjax from loopback
instead of a CDN.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import serve
from layout import RAW_MARKUP, chapter_notebooks, markdown_of

CHAPTERS = chapter_notebooks()
MATHJAX2 = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"

TYPESET = r"""
const done = arguments[arguments.length - 1];
const start = Date.now();
(function poll() {
  if (window.MathJax && MathJax.Hub) {
    MathJax.Hub.Queue(() => {
      const all = MathJax.Hub.getAllJax();
      const bad = all.map(j => j.root.toMathML(""))
        .filter(m => m.includes("<merror") || m.includes('mathcolor="red"'));
      done({count: all.length, errors: bad.map(m => m.replace(/\s+/g, " ").slice(0, 160))});
    });
  } else if (Date.now() - start > 60000) {
    done({count: 0, errors: ["MathJax never started"]});
  } else {
    setTimeout(poll, 100);
  }
})();
"""

REPORT = r"""
const markdown = Array.from(document.querySelectorAll(".jp-RenderedMarkdown"));
const paragraphs = markdown.flatMap(m => Array.from(m.querySelectorAll("p")));
return {
  text: markdown.map(m => m.innerText).join("\n"),
  fences: markdown.flatMap(m => Array.from(m.querySelectorAll("pre code")))
    .map(c => c.className + " " + c.textContent.slice(0, 40))
    .filter(c => c.includes("{")),
  solutions: paragraphs.filter(p => p.textContent.trim() === ":::{dropdown} Solution").length,
  alerts: markdown.flatMap(m => Array.from(m.querySelectorAll("blockquote > p:first-child")))
    .filter(p => /^\[!(NOTE|WARNING)\]/.test(p.textContent)).length,
};
"""


def mathjax2() -> Path:
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).parent / "static"


@pytest.fixture(scope="session")
def nbconvert_url(tmp_path_factory):
    out = tmp_path_factory.mktemp("nbconvert")
    (out / "mathjax").symlink_to(mathjax2(), target_is_directory=True)
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", "--log-level=WARN",
                    "--output-dir", str(out), f"--HTMLExporter.mathjax_url={MATHJAX2}",
                    *map(str, CHAPTERS)], check=True)
    with serve(out) as url:
        yield url


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_reads_without_myst(browser, nbconvert_url, path):
    browser.get(f"{nbconvert_url}/{path.stem}.html")
    maths = browser.execute_async_script(TYPESET)
    assert maths["errors"] == [], f"{path.stem}: MathJax errors: {maths['errors']}"
    display = sum(m.count("$$") // 2 for m in markdown_of(path))
    assert maths["count"] >= display > 0, f"{path.stem}: {maths['count']} equations typeset"

    report = browser.execute_script(REPORT)
    assert report["fences"] == [], f"{path.stem}: directives shown as code: {report['fences']}"
    text = report["text"].replace(":::{dropdown} Solution", "")  # a solution's fence
    raw = [m for m in RAW_MARKUP if m in text and m not in ("{eq}", "{cite}")]
    assert raw == [], f"{path.stem}: MyST markup shown as text: {raw}"
    assert "$$" not in report["text"], f"{path.stem}: display maths left untypeset"
    markdown = markdown_of(path)
    solutions = sum(m.count(":::{dropdown} Solution\n") for m in markdown)
    assert report["solutions"] == solutions > 0, (
        f"{path.stem}: {report['solutions']} of {solutions} solutions read as paragraphs")
    alerts = sum(len(re.findall(r"^> \[!(NOTE|WARNING)\]$", m, re.M)) for m in markdown)
    assert report["alerts"] == alerts, f"{path.stem}: {report['alerts']} of {alerts} boxes"
