"""Serve MathJax 3 from the built book instead of a CDN, so the HTML works with no network.

The MathJax files come from the PyPI package ``django-static-mathjax`` (pinned in
requirements.txt; it ships MathJax 3 as plain static files and needs no Django at all). After an
HTML build they are copied to ``_build/html/_static/mathjax/`` and ``mathjax_path`` points there.

Only the parts a page can load are copied (about 2 MB of MathJax's 24 MB): the combined TeX
component (its context menu included) with the TeX extensions it loads on demand and the web
fonts of its HTML output. The speech and explorer options of the menu would need MathJax's
speech-rule engine as well (another 10 MB), so they are not served.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx

TARGET = "mathjax"  # under _static/
ENTRY = "tex-chtml.js"
PARTS = [ENTRY, "input/tex/extensions", "output/chtml/fonts/woff-v2"]


def mathjax_source() -> Path:
    """Folder holding MathJax's ``es5`` build inside the installed package."""
    import mathjax  # provided by django-static-mathjax

    source = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (source / ENTRY).is_file():
        raise FileNotFoundError(f"MathJax 3 not found at {source}; install django-static-mathjax")
    return source


def _point_to_local_copy(app: Sphinx, config) -> None:
    config.mathjax_path = f"{TARGET}/{ENTRY}"


def _copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / TARGET
    if (target / ENTRY).is_file():
        return
    source = mathjax_source()
    for part in PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, dirs_exist_ok=True)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, target / part)


def setup(app: Sphinx) -> dict:
    mathjax_source()  # fail early, with a clear message, if the files are missing
    app.connect("config-inited", _point_to_local_copy)
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
