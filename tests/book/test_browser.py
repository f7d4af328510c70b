"""Open every page of the built book in headless Chromium, served from loopback with no network.

For each page, at a 1366-pixel-wide window: MathJax (served from the build) typesets every
equation without an error, every image has loaded and is shown at >= 60 % of its natural width,
the browser console stays free of errors, every resource came from the book itself and a
chapter's first load (what the browser receives, text gzip-compressed as the book's host
sends it) stays under 2 MB; every FrameSlider changes its picture when its slider
moves, and every erratum block quote of a chapter became a warning box.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from layout import ROOT, markdown_of, toc_files

PAGES = ["index"] + [f for f in toc_files()]
MIN_FIGURE_SCALE = 0.6
FIRST_LOAD_BYTES = 2 * 1024 * 1024
TITLE = "Sequence Learning, Executed"

WAIT_FOR_MATHJAX = """
const done = arguments[arguments.length - 1];
const start = Date.now();
(function poll() {
  const needed = document.querySelector("div.math, span.math") || document.querySelector("script[src*='mathjax']");
  if (!needed) {
    done("ok");
  } else if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    // the startup promise can resolve before the page's first typeset has reached every
    // equation: wait (at most 20 s more) until each one holds MathJax's output
    MathJax.startup.promise.then(() => {
      const until = Date.now() + 20000;
      (function settled() {
        const math = Array.from(document.querySelectorAll("div.math, span.math"));
        if (math.every(m => m.querySelector("mjx-container")) || Date.now() > until) {
          done("ok");
        } else {
          setTimeout(settled, 100);
        }
      })();
    }, (e) => done("error: " + e));
  } else if (Date.now() - start > 30000) {
    done("MathJax never started");
  } else {
    setTimeout(poll, 100);
  }
})();
"""

MATH_REPORT = """
const math = Array.from(document.querySelectorAll("div.math, span.math"));
return {
  total: math.length,
  untypeset: math.filter(m => !m.querySelector("mjx-container")).map(m => m.textContent.slice(0, 80)),
  errors: Array.from(document.querySelectorAll("mjx-merror")).map(e => e.textContent.slice(0, 120)),
};
"""

IMAGE_REPORT = """
return Array.from(document.images)
  .filter(img => !(img.complete && img.naturalWidth > 0))
  .map(img => img.src.slice(0, 100));
"""

RESOURCES = "return performance.getEntriesByType('resource').map(e => e.name);"

SHRUNK_FIGURES = """
return Array.from(document.querySelectorAll("article img"))
  .filter(img => img.offsetParent !== null && img.naturalWidth > 0
                 && img.clientWidth < %s * img.naturalWidth)
  .map(img => [img.src.slice(-40), img.clientWidth, img.naturalWidth]);
""" % MIN_FIGURE_SCALE

SCROLLING_CODE = """
return Array.from(document.querySelectorAll("div.cell_input div.highlight pre"))
  .filter(pre => pre.scrollWidth > pre.clientWidth + 1)
  .map(pre => pre.textContent.split("\\n").reduce((a, b) => a.length > b.length ? a : b));
"""

LOADED_BYTES = """
const done = arguments[arguments.length - 1];
document.fonts.ready.then(() => setTimeout(() => {
  const entries = performance.getEntriesByType("navigation")
    .concat(performance.getEntriesByType("resource"));
  done(entries.reduce((n, e) => n + e.encodedBodySize, 0));  // bytes sent, compressed
}, 500));
"""

MOVE_SLIDERS = """
const results = [];
document.querySelectorAll(".seqlearn-frameslider").forEach((root) => {
  const img = root.querySelector("img.fs-frame");
  root.querySelectorAll("input.fs-slider").forEach((slider) => {
    const before = img.src;
    const old = slider.value;
    slider.value = (parseInt(old, 10) === 0) ? "1" : "0";
    slider.dispatchEvent(new Event("input", {bubbles: true}));
    results.push({id: root.id, param: slider.dataset.param, changed: img.src !== before});
    slider.value = old;
    slider.dispatchEvent(new Event("input", {bubbles: true}));
  });
});
return results;
"""


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_offline(browser, book_url, page):
    browser.get_log("browser")  # forget what earlier pages logged
    browser.get(f"{book_url}/{page}.html")
    assert browser.execute_async_script(WAIT_FOR_MATHJAX) == "ok"

    math = browser.execute_script(MATH_REPORT)
    assert math["untypeset"] == [], f"{page}: equations not typeset: {math['untypeset']}"
    assert math["errors"] == [], f"{page}: MathJax errors: {math['errors']}"
    if page.startswith("chapters/"):
        assert math["total"] > 0, f"{page}: a chapter without a single equation?"

    broken = browser.execute_script(IMAGE_REPORT)
    assert broken == [], f"{page}: images that did not load: {broken}"

    host = urlparse(book_url).netloc
    foreign = [u for u in browser.execute_script(RESOURCES)
               if urlparse(u).scheme not in ("data", "blob") and urlparse(u).netloc != host]
    assert foreign == [], f"{page}: resources from outside the book: {foreign}"

    assert browser.execute_script(SHRUNK_FIGURES) == [], (
        f"{page}: figures shown below {MIN_FIGURE_SCALE:.0%} of their natural width "
        "(src, shown, natural): keep figures at most 8 inches wide")
    scrolling = browser.execute_script(SCROLLING_CODE)
    assert scrolling == [], f"{page}: code cells that scroll sideways (longest line): {scrolling}"
    if page.startswith("chapters/"):
        loaded = browser.execute_async_script(LOADED_BYTES)
        assert loaded <= FIRST_LOAD_BYTES, f"{page}: first load is {loaded / 2**20:.2f} MiB"
    errors = [e["message"][:200] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], f"{page}: console errors: {errors}"


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("chapters/")])
def test_every_slider_changes_its_picture(browser, book_url, page):
    browser.get(f"{book_url}/{page}.html")
    moved = browser.execute_script(MOVE_SLIDERS)
    assert moved, f"{page}: no interactive slider found"
    unchanged = [m for m in moved if not m["changed"]]
    assert unchanged == [], f"{page}: sliders that did not change their picture: {unchanged}"


def test_titles_do_not_repeat_the_book_title(browser, book_url):
    browser.get(f"{book_url}/intro.html")
    assert browser.title.count(TITLE) == 1, browser.title


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("chapters/")])
def test_errata_are_boxes_and_slider_hints_are_gone(browser, book_url, page):
    """Bold-titled quotes become admonitions; the script of a working slider drops its hint."""
    markdown = markdown_of(ROOT / f"{page}.ipynb")
    errata = sum(text.count("> **Erratum") for text in markdown)
    browser.get(f"{book_url}/{page}.html")
    boxes = browser.execute_script(
        "return Array.from(document.querySelectorAll('.admonition.warning > .admonition-title'))"
        ".filter(t => t.textContent.startsWith('Erratum')).length")
    assert boxes == errata, f"{page}: {errata} errata in the source, {boxes} warning boxes"
    hints = browser.execute_script("return document.querySelectorAll('.fs-hint').length")
    assert hints == 0, f"{page}: a slider's 'scripts are blocked' hint is still shown"
