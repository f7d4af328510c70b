"""Leave out of the published book what no reader's browser loads.

Removed after the build, which keeps the book small to host and to download as a whole:

- JavaScript and CSS source maps (``*.map``, 3.4 MB): fetched only by developer tools;
- the theme's message catalogues (``_static/locales``, 0.7 MB): used while building, never
  by a page;
- Font Awesome's TrueType fonts (0.5 MB): every browser the theme supports takes the WOFF2
  file listed before them;
- Font Awesome's JavaScript (1.5 MB), replaced by an empty script: the theme draws each icon
  with Font Awesome's web fonts from its CSS as well, and the script only swaps those glyphs
  for the same icons as SVG. The book configures no custom icon that would need it;
- a general index page left by an earlier build: the book has none (``html_use_index`` is
  false: chapters carry no index entries), and an incremental build does not delete it.

The browser tests open every page and fail on any request that finds nothing and on any
console error, and check that a chapter's first load stays under 2 MB.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx

FONT_AWESOME_JS = "_static/scripts/fontawesome.js"


def _remove_source_maps(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for path in [*out.rglob("*.map"), *out.glob("_static/vendor/fontawesome/webfonts/*.ttf")]:
        path.unlink()
    shutil.rmtree(out / "_static" / "locales", ignore_errors=True)
    if not app.config.html_use_index:
        (out / "genindex.html").unlink(missing_ok=True)
    (out / FONT_AWESOME_JS).write_text(
        "/* Font Awesome's icons come from its web fonts (see _ext/lean_build.py). */\n")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _remove_source_maps)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
