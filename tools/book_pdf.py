"""The whole book as one PDF: headless Chromium prints the book's single-page build.

    python tools/book_pdf.py SINGLEHTML OUT.pdf

SINGLEHTML is the output of ``jupyter-book build . --builder singlehtml`` (``make pdf``
runs both). The page is served from loopback, with the book's own offline MathJax; once
MathJax has typeset every equation and every image has loaded, the script adds a cover
and a contents page, opens the folded solutions, applies ``tools/book_pdf.css`` and
prints with the DevTools protocol's ``Page.printToPDF``: A4, page numbers in the footer,
a PDF outline of the headings. A first print tells on which page each part and chapter
starts (``pdfinfo -dests``, from Debian's poppler-utils); the second print writes those
numbers into the contents; Debian's qpdf compresses the result. Links between pages
become links inside the PDF; links to files that are not in it (downloads) lead to the
published book.

It fails, printing nothing, when an equation is left untypeset or a code block is wider
than the printed page (it would be cut at the right edge).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import http.server
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CSS = Path(__file__).with_suffix(".css")
PAGE = "intro.html"
MM = 1 / 25.4  # inches
A4_INCHES = (210 * MM, 297 * MM)
MARGIN_INCHES = 15 * MM
CSS_PX_PER_INCH = 96
COMMAND_TIMEOUT_S = 900
FOOTER = ('<div style="font-size:8pt;width:100%;text-align:center;color:#555">'
          '<span class="pageNumber"></span></div>')

TYPESET = """
const done = arguments[arguments.length - 1];
const until = Date.now() + arguments[0] * 1000;
document.querySelectorAll("img").forEach(img => { img.loading = "eager"; });
(function poll() {
  const math = Array.from(document.querySelectorAll("div.math, span.math"));
  const images = Array.from(document.images);
  const ready = window.MathJax && MathJax.startup && MathJax.startup.document
    && math.every(m => m.querySelector("mjx-container"))
    && images.every(img => img.complete);
  if (ready || Date.now() > until) {
    done({
      untypeset: math.filter(m => !m.querySelector("mjx-container"))
                     .map(m => m.textContent.slice(0, 80)),
      errors: Array.from(document.querySelectorAll("mjx-merror"))
                   .map(e => e.textContent.slice(0, 80)),
      broken: images.filter(img => !(img.complete && img.naturalWidth > 0))
                    .map(img => img.src.slice(0, 80)),
    });
  } else {
    setTimeout(poll, 250);
  }
})();
"""

# arguments: the CSS, the book's title and author, the entries of the contents and the
# published book's address (for links to files that are not in the single page)
PREPARE = """
const [css, title, author, entries, published] = arguments;
const article = document.querySelector("article.bd-article");
const style = document.createElement("style");
style.textContent = css;
document.head.appendChild(style);
document.querySelectorAll("details:not(.above-input)").forEach(d => { d.open = true; });
const cover = document.createElement("section");
cover.id = "book-pdf-cover";
cover.innerHTML = "<h1></h1><p></p>";
cover.querySelector("h1").textContent = title;
cover.querySelector("p").textContent = author;
const contents = document.createElement("section");
contents.id = "book-pdf-contents";
contents.innerHTML = "<h2>Contents</h2><ol></ol>";
const list = contents.querySelector("ol");
const entry = (cls, text, href) => {
  const li = document.createElement("li");
  li.className = cls;
  if (href) {
    li.innerHTML = '<a><span class="title"></span><span class="number"></span></a>';
    li.querySelector("a").href = href;
    li.querySelector(".title").textContent = text;
  } else {
    li.textContent = text;
  }
  list.appendChild(li);
};
const missing = [];
for (const [kind, name] of entries) {
  if (kind === "part") { entry("part", name, null); continue; }
  // the front page opens the article; every other page follows its "document-" anchor
  const section = kind === "front" ? article.querySelector("section")
                  : document.getElementById("document-" + name)?.nextElementSibling;
  const heading = section?.querySelector("h1, h2");
  if (!heading) { missing.push(name); continue; }
  // section ids repeat across pages ("references"): link the page's own anchor, moved
  // into its section so that it lands on the page where the section starts
  const id = "document-" + name;
  const anchor = document.getElementById(id)
                 ?? Object.assign(document.createElement("span"), {id});
  section.prepend(anchor);
  section.classList.add("book-pdf-page");
  entry(kind, heading.textContent.replace(/#$/, "").trim(), "#" + anchor.id);
}
for (const a of document.querySelectorAll("a[href]")) {
  const url = new URL(a.href);
  if (url.origin !== location.origin || url.pathname === location.pathname) continue;
  const id = decodeURIComponent(url.hash.slice(1));
  a.href = id && document.getElementById(id) ? "#" + id
           : published + url.pathname.slice(1) + url.hash;
}
const first = article.firstElementChild;
article.insertBefore(cover, first);
article.insertBefore(contents, first);
return missing;
"""

NUMBER = """
const numbers = arguments[0];
document.querySelectorAll("#book-pdf-contents a").forEach(a => {
  const target = a.getAttribute("href").slice(1);
  a.querySelector(".number").textContent = numbers[target] || "";
});
"""

CUT_CODE = """
return Array.from(document.querySelectorAll("article pre"))
  .filter(pre => pre.offsetParent !== null && pre.scrollWidth > pre.clientWidth + 1)
  .map(pre => pre.textContent.split("\\n")
                 .reduce((a, b) => a.length > b.length ? a : b).slice(0, 100));
"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path):
    """Serve ``directory`` on a free loopback port; yield its base URL."""
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium(width_px: int):
    """Debian's headless Chromium through its chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    profile = tempfile.mkdtemp(prefix="seqlearn-pdf-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage",
                 f"--window-size={width_px},1000", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    service = Service(executable_path=shutil.which("chromedriver"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(COMMAND_TIMEOUT_S)
    driver.set_script_timeout(COMMAND_TIMEOUT_S)
    # printing 470 pages takes minutes on a busy machine: wait for chromedriver's answer
    driver.command_executor.client_config.timeout = COMMAND_TIMEOUT_S
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def contents() -> list[tuple[str, str]]:
    """The entries of the contents in the book's order: ("front", the front page), then
    for each part of _toc.yml ("part", its caption) if it has one and ("page", docname)
    for each of its files."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    entries = [("front", toc["root"])]

    def walk(items) -> None:
        for item in items or []:
            if "file" in item:
                entries.append(("page", item["file"]))
            walk(item.get("sections"))
            walk(item.get("chapters"))

    for part in toc.get("parts", []):
        if part.get("caption"):
            entries.append(("part", part["caption"]))
        walk(part.get("chapters"))
    return entries


def published_url(repository: str) -> str:
    """The book's address on GitHub Pages (README: it follows from repository.url)."""
    owner, name = repository.rstrip("/").split("/")[-2:]
    return f"https://{owner}.github.io/{name}/"


def print_pdf(driver) -> bytes:
    width, height = A4_INCHES
    stream = driver.execute_cdp_cmd("Page.printToPDF", {
        "paperWidth": width, "paperHeight": height, "printBackground": True,
        "marginTop": MARGIN_INCHES, "marginBottom": MARGIN_INCHES,
        "marginLeft": MARGIN_INCHES, "marginRight": MARGIN_INCHES,
        "displayHeaderFooter": True, "headerTemplate": "<span></span>",
        "footerTemplate": FOOTER, "generateTaggedPDF": True,
        "generateDocumentOutline": True, "transferMode": "ReturnAsStream",
    })["stream"]
    chunks = []
    while True:
        chunk = driver.execute_cdp_cmd("IO.read", {"handle": stream,
                                                   "size": 4 * 1024 * 1024})
        data = chunk["data"]
        chunks.append(base64.b64decode(data) if chunk.get("base64Encoded") else
                      data.encode("latin-1"))
        if chunk.get("eof"):
            break
    driver.execute_cdp_cmd("IO.close", {"handle": stream})
    return b"".join(chunks)


def destination_pages(pdf: Path) -> dict[str, int]:
    """The page of every named destination (a link target) of a PDF."""
    out = subprocess.run(["pdfinfo", "-dests", str(pdf)], capture_output=True,
                         text=True, check=True).stdout
    pages = {}
    for line in out.splitlines():
        match = re.match(r'\s*(\d+)\s+\[.*\]\s+"(.*)"\s*$', line)
        if match:
            pages.setdefault(match.group(2), int(match.group(1)))
    return pages


def build(singlehtml: Path, out: Path, timeout_s: int = 300) -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    width_px = round((A4_INCHES[0] - 2 * MARGIN_INCHES) * CSS_PX_PER_INCH)
    with serve(singlehtml) as url, chromium(width_px) as driver:
        driver.get(f"{url}/{PAGE}")
        report = driver.execute_async_script(TYPESET, timeout_s)
        if any(report.values()):
            raise SystemExit(f"the book is not ready to print: {report}")
        missing = driver.execute_script(PREPARE, CSS.read_text(), config["title"],
                                        config["author"], contents(),
                                        published_url(config["repository"]["url"]))
        if missing:
            raise SystemExit(f"pages of _toc.yml not in the single page: {missing}")
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        cut = driver.execute_script(CUT_CODE)
        if cut:
            raise SystemExit(f"code wider than the printed page: {cut[:5]}")
        out.parent.mkdir(parents=True, exist_ok=True)
        raw = out.with_suffix(".raw.pdf")
        raw.write_bytes(print_pdf(driver))
        driver.execute_script(NUMBER, {name: str(page) for name, page
                                       in destination_pages(raw).items()})
        raw.write_bytes(print_pdf(driver))
    # Chromium writes the tagged structure (which the outline needs) uncompressed: 24 MB
    # instead of 13 MB once qpdf has packed the objects into compressed streams. Streams
    # Chromium compressed itself are copied as they are: some carry bytes after their
    # zlib data, and decoding them again (--recompress-flate) makes qpdf warn and exit 3.
    subprocess.run(["qpdf", "--object-streams=generate", "--compress-streams=y",
                    "--compression-level=9", str(raw), str(out)], check=True)
    raw.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("singlehtml", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    build(args.singlehtml, args.out)
    print(f"{args.out}: {args.out.stat().st_size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
