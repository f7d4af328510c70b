"""The published book stays light: what a reader downloads, and what the host stores."""

from __future__ import annotations

from conftest import HTML

MAX_BOOK_BYTES = 20 * 1024 * 1024
"""The pages a reader opens one at a time (each under the 2 MB first load that
test_browser.py checks) plus MathJax, fonts and figures: 15.3 MiB for fourteen
chapters and the appendix in November 2026 (0.6-0.8 MiB of highlighted code and stored
output per chapter page). The bound leaves room for about six more such chapters, not
for a stray large file."""
DOWNLOADS = HTML / "downloads"
"""The notebooks, the PDF and the handouts (_ext/downloads.py), fetched only on request:
tests/book/test_downloads.py bounds them."""


def test_built_book_is_small():
    files = [p for p in HTML.rglob("*") if p.is_file() and DOWNLOADS not in p.parents]
    total = sum(p.stat().st_size for p in files)
    biggest = sorted(files, key=lambda p: p.stat().st_size)[-5:]
    assert total <= MAX_BOOK_BYTES, (
        f"_build/html is {total / 2**20:.1f} MiB; largest: "
        + ", ".join(f"{p.relative_to(HTML)} {p.stat().st_size / 2**20:.1f} MiB"
                    for p in biggest))


def test_no_source_maps_are_published():
    assert list(HTML.rglob("*.map")) == []
