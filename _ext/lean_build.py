"""Leave out of the published book what no reader's browser loads.

The themes ship JavaScript and CSS source maps (``*.map``, 3.4 MB): a browser fetches them only
when its developer tools are open. Removing them after the build keeps the book small to host
and to download as a whole.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx


def _remove_source_maps(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for path in Path(app.outdir).rglob("*.map"):
        path.unlink()


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", _remove_source_maps)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
