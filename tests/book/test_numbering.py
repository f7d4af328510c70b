"""The built book numbers its chapters 1-14 and leaves the part pages unnumbered.

Read from the navigation of the built front page (every page carries the same sidebar).
"""

from __future__ import annotations

import re

from conftest import HTML
from layout import toc_files

LINK = re.compile(r'<a class="reference internal" href="([^"#]+)\.html">([^<]*)</a>')


def sidebar_titles() -> dict[str, str]:
    html = (HTML / "intro.html").read_text()
    nav = html[html.index('class="bd-links'):]
    return {href: title for href, title in LINK.findall(nav)}


def test_chapters_numbered_one_to_fourteen_part_pages_unnumbered():
    titles = sidebar_titles()
    chapters = [f for f in toc_files() if f.startswith("chapters/")]
    numbers = [re.match(r"(\d+)\. ", titles[f]) for f in chapters]
    assert all(numbers), {f: titles[f] for f, n in zip(chapters, numbers) if not n}
    assert [int(n.group(1)) for n in numbers] == list(range(1, 15))
    for page in (f for f in toc_files() if f.startswith("parts/")):
        assert not re.match(r"\d", titles[page]), f"{page} is numbered: {titles[page]!r}"
