"""The book reads on any machine, on a phone, on paper and in dark mode.

- On a browser with no CJK font at all (its fontconfig lists only DejaVu), the
  quotations of the notes (「...」) are drawn with the font subset the book ships
  (``_static/fonts/``, ``_static/quotations.css``), not as empty boxes.
- At a phone's 390 px, no page is wider than the screen; on paper, no code runs past
  its box.
- In dark mode a slider's box is dark; one search entry point shows at each width;
  search excerpts read as words, not TeX; there is no empty general index.

Each page is loaded once (at phone width, then measured for print as well).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from conftest import HTML, WINDOW, chromium
from test_browser import WAIT_FOR_MATHJAX

from layout import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from subset_font import CJK_RANGES, SUBSET  # noqa: E402

LAPTOP = {"width": WINDOW[0], "height": WINDOW[1], "deviceScaleFactor": 1,
          "mobile": False}
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
PAPER = {"width": 718, "height": 1000, "deviceScaleFactor": 1, "mobile": False}
"""A4 in CSS pixels (210 mm at 96 px per inch) less Chrome's default margins, 1 cm."""

PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if not p.relative_to(HTML).parts[0].startswith("_")) or ["index.html"]
CJK = "[" + "".join(f"\\u{{{lo:x}}}-\\u{{{hi:x}}}" for lo, hi in CJK_RANGES) + "]"
"""The characters of the shipped subset, as a JavaScript regular expression (flag u)."""
DARK_ENOUGH = 0.2  # relative luminance (WCAG) of a dark box; the theme's grey: 0.66

WIDER_THAN_SCREEN = """
const width = document.documentElement.clientWidth;
const scrolls = (e) =>
  ["auto", "scroll", "hidden"].includes(getComputedStyle(e).overflowX);
const inScrollingBox = (e) => {
  for (let p = e.parentElement; p; p = p.parentElement) { if (scrolls(p)) return true; }
  return false;
};
return {scrollWidth: document.documentElement.scrollWidth, width: width,
  culprits: Array.from(document.querySelectorAll("body *"))
    .filter(e => e.getBoundingClientRect().right > width + 1 && !inScrollingBox(e)
                 && e.checkVisibility({visibilityProperty: true}))
    .slice(-3).map(e => `${e.tagName.toLowerCase()}.${e.className} ` +
                        `${Math.round(e.getBoundingClientRect().right)} px: ` +
                        e.textContent.slice(0, 50))};
"""

CODE_PAST_ITS_BOX = """
const page = document.documentElement.clientWidth;
return Array.from(document.querySelectorAll("pre, code"))
  .filter(e => e.offsetParent !== null)
  .filter(e => e.scrollWidth > e.clientWidth + 1 && e.tagName === "PRE"
               || e.getBoundingClientRect().right > page + 1)
  .map(e => e.textContent.trim().split("\\n")[0].slice(0, 60));
"""

OWN_CJK_TEXT = """
const cjk = new RegExp(arguments[0], "gu");
const found = [];
document.querySelectorAll("article *").forEach((e) => {
  const own = Array.from(e.childNodes).filter(n => n.nodeType === Node.TEXT_NODE)
    .map(n => n.data).join("");
  const count = (own.match(cjk) || []).length;
  if (count) {
    e.dataset.cjkProbe = found.length;
    found.push(count);
  }
});
return found;
"""

SLIDER_BACKGROUND = """
for (let e = document.querySelector(".seqlearn-frameslider"); e; e = e.parentElement) {
  const colour = getComputedStyle(e).backgroundColor;
  if (!/rgba\\(.*, 0\\)$|transparent/.test(colour)) return colour;
}
return null;
"""

SEARCH_ENTRY_POINTS = """
return Array.from(document.querySelectorAll(".search-button__button"))
  .filter(b => b.checkVisibility())
  .map(b => ({where: b.parentElement.className, top: b.getBoundingClientRect().top,
               bottom: b.getBoundingClientRect().bottom}));
"""

SEARCH_RESULTS = """
const done = arguments[arguments.length - 1];
const until = Date.now() + 60000;
(function poll() {
  const status = document.querySelector("p.search-summary");
  const items = Array.from(document.querySelectorAll("ul.search li"));
  const finished = status && /Search finished|did not match/.test(status.textContent)
    && items.every(li => li.querySelector("p.context"));
  if (finished || Date.now() > until) {
    done(items.map(li => (li.querySelector("p.context") || {}).textContent || ""));
  } else {
    setTimeout(poll, 100);
  }
})();
"""


def _platform_fonts(browser, selector: str) -> list[dict]:
    """The fonts that draw an element's own text, with the glyphs each one drew."""
    root = browser.execute_cdp_cmd("DOM.getDocument", {"depth": 0})["root"]
    node = browser.execute_cdp_cmd(
        "DOM.querySelector", {"nodeId": root["nodeId"], "selector": selector})
    return browser.execute_cdp_cmd("CSS.getPlatformFontsForNode", node)["fonts"]


def _luminance(css_colour: str) -> float:
    red, green, blue = (int(v) / 255 for v in re.findall(r"\d+", css_colour)[:3])
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
              for c in (red, green, blue)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.fixture(scope="module")
def browser_without_cjk(tmp_path_factory):
    """Chromium whose fontconfig knows DejaVu only: it has no font with CJK glyphs."""
    dejavu = next(Path("/usr/share/fonts").rglob("DejaVuSans.ttf"), None)
    if dejavu is None:
        pytest.fail("DejaVu Sans is needed (Debian's fonts-dejavu-core)")
    dejavu = dejavu.parent
    folder = tmp_path_factory.mktemp("fontconfig")
    config = folder / "fonts.conf"
    config.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n'
        f"<fontconfig>\n  <dir>{dejavu}</dir>\n"
        f"  <cachedir>{folder / 'cache'}</cachedir>\n</fontconfig>\n")
    with chromium(env=dict(os.environ, FONTCONFIG_FILE=str(config))) as driver:
        driver.execute_cdp_cmd("DOM.enable", {})
        driver.execute_cdp_cmd("CSS.enable", {})
        yield driver


def test_quotations_render_with_the_shipped_font(browser_without_cjk, book_url):
    from fontTools.ttLib import TTFont

    with TTFont(SUBSET) as font:
        family = font["name"].getDebugName(1)
    browser = browser_without_cjk
    browser.get(f"{book_url}/appendix/errata.html")
    assert browser.execute_async_script(WAIT_FOR_MATHJAX) == "ok"
    counts = browser.execute_script(OWN_CJK_TEXT, CJK)
    browser.execute_async_script("document.fonts.ready.then(arguments[0]);")
    source = (ROOT / "appendix" / "errata.ipynb").read_text(encoding="utf-8")
    shown = browser.execute_script(
        "return document.querySelector('article').textContent.split('「').length - 1;")
    assert 0 < source.count("「") == shown, (
        f"{source.count('「')} quotations in the errata, {shown} on the page")

    browser.execute_script(
        "const s = document.createElement('span'); s.id = 'no-cjk-font';"
        "s.style.fontFamily = 'sans-serif'; s.textContent = '「語」';"
        "document.querySelector('article').prepend(s);")
    control = _platform_fonts(browser, "#no-cjk-font")
    assert all("DejaVu" in f["familyName"] for f in control), (
        f"the browser should have no CJK font, yet draws 「語」 with {control}")

    wrong = []
    for probe, count in enumerate(counts):
        selector = f'[data-cjk-probe="{probe}"]'
        fonts = _platform_fonts(browser, selector)
        shipped = sum(f["glyphCount"] for f in fonts
                      if f["isCustomFont"] and f["familyName"] == family)
        if shipped != count:
            text = browser.execute_script(
                "return document.querySelector(arguments[0]).textContent.slice(0, 40);",
                selector)
            drawn = [(f["familyName"], f["glyphCount"]) for f in fonts]
            wrong.append(f"{text!r}: {count} CJK characters, {shipped} glyphs of "
                         f"{family} ({drawn})")
    assert wrong == [], "quotations not in the shipped font:\n" + "\n".join(wrong)


@pytest.fixture
def emulate(browser):
    """Set the session's browser's screen (``emulate(PHONE)``) and medium
    (``media="print"``) for one test; the laptop screen comes back afterwards."""
    def to(metrics: dict, media: str = "") -> None:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": media})

    yield to
    browser.get("about:blank")  # laying out a chapter again would cost a second
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.mark.parametrize("page", PAGES)
def test_page_fits_a_phone_and_paper(browser, emulate, book_url, page):
    emulate(PHONE)
    browser.get(f"{book_url}/{page}")
    assert browser.execute_async_script(WAIT_FOR_MATHJAX) == "ok"
    wide = browser.execute_script(WIDER_THAN_SCREEN)
    assert wide["scrollWidth"] <= wide["width"], (
        f"{page} is {wide['scrollWidth']} px wide on a {wide['width']} px phone; "
        f"widest: {wide['culprits']}")

    emulate(PAPER, media="print")
    cut = browser.execute_script(CODE_PAST_ITS_BOX)
    assert cut == [], f"{page}: printed code past its box (first lines): {cut}"


def test_slider_box_is_dark_in_dark_mode(browser, book_url):
    browser.get(f"{book_url}/chapters/gru.html")
    browser.execute_script("document.documentElement.dataset.theme = 'dark';")
    colour = browser.execute_script(SLIDER_BACKGROUND)
    assert colour is not None and _luminance(colour) < DARK_ENOUGH, (
        f"in dark mode the slider's box is {colour}")


@pytest.mark.parametrize("screen", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_one_search_entry_point_in_view(browser, emulate, book_url, screen):
    """On the last chapter, where the sidebar scrolls down to its entry."""
    emulate(screen)
    browser.get(f"{book_url}/chapters/ntm.html")
    entries = browser.execute_script(SEARCH_ENTRY_POINTS)
    assert len(entries) == 1, f"search entry points shown: {entries}"
    assert 0 <= entries[0]["top"] and entries[0]["bottom"] <= screen["height"], (
        f"the search entry point is out of view: {entries}")


def test_search_excerpts_read_as_words(browser, book_url):
    """"Elman" stands next to equations on several pages (the GRU chapter's start)."""
    browser.get(f"{book_url}/search.html?q=Elman")
    excerpts = browser.execute_async_script(SEARCH_RESULTS)
    assert len(excerpts) >= 5, f"search for 'Elman' found {len(excerpts)} pages"
    raw = [e for e in excerpts if re.search(r"\\[(\[)\]]|\$", e)]
    assert raw == [], f"search excerpts with raw TeX: {raw}"
    assert any("h_t" in e for e in excerpts), f"no equation in the excerpts: {excerpts}"


def test_no_general_index():
    """Chapters carry no index entries (no MyST directives), so the book has no index
    page and no page links to one."""
    assert not (HTML / "genindex.html").exists()
    linking = [p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if "genindex" in p.read_text(encoding="utf-8")]
    assert linking == [], f"pages linking to the general index: {linking}"
