"""Keep the browser console of every page free of errors the book's own build causes.

- sphinx-thebe (loaded by Jupyter Book) adds its inline configuration script twice under
  Sphinx 7, and the second ``const THEBE_JS_URL`` throws a SyntaxError on every page: each
  page lists a script (a file, or an inline body) once.
- The theme's colour mode starts empty on a reader's first visit, which its script reports
  with ``console.error("Got invalid theme mode")``: the default mode is set to "auto" (follow
  the system), which is what the theme then falls back to anyway.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def _unique_scripts(app: Sphinx, pagename: str, templatename: str, context: dict,
                    doctree) -> None:
    seen: set[tuple[str, str]] = set()
    unique = []
    for script in context.get("script_files", []):
        # the same file or inline body (filename None or ""), whatever its priority
        key = (str(getattr(script, "filename", script) or ""),
               getattr(script, "attributes", {}).get("body", ""))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def _default_mode(app: Sphinx, pagename: str, templatename: str, context: dict,
                  doctree) -> None:
    # the page template writes {{ default_mode }}; sphinx-book-theme leaves it empty
    if not context.get("default_mode"):
        context["default_mode"] = "auto"


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", _default_mode)
    app.connect("html-page-context", _unique_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
