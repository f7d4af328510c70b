"""Every part opens with an unnumbered page whose notation table the appendix gathers;
the chapters are numbered 1-14 across the parts."""

from __future__ import annotations

import re

import yaml

from layout import ROOT

NOTATION = ROOT / "appendix" / "notation.md"
TABLE = re.compile(r"<!-- notation:start -->\n(.*?)<!-- notation:end -->", re.S)


def book_parts() -> list[tuple[str, str, list[str]]]:
    """(caption, opening page, chapters) of every part: a captioned, unnumbered toctree
    holding the part's opening page, followed by a numbered toctree of its chapters."""
    parts = yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]
    found = []
    for part, following in zip(parts, parts[1:]):
        if part.get("caption", "").startswith("Part "):
            assert not part.get("numbered"), f"{part['caption']}: its page is numbered"
            assert len(part["chapters"]) == 1, f"{part['caption']}: one opening page only"
            assert following.get("numbered") and "caption" not in following, (
                f"{part['caption']} is not followed by a numbered list of its chapters")
            found.append((part["caption"], part["chapters"][0]["file"],
                          [c["file"] for c in following["chapters"]]))
    return found


def test_chapters_are_numbered_one_to_fourteen_and_part_pages_not():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    numbered = [c["file"] for p in toc["parts"] if p.get("numbered") for c in p["chapters"]]
    assert all(f.startswith("chapters/") for f in numbered), numbered
    assert len(numbered) == 14
    assert numbered == [f for _, _, chapters in book_parts() for f in chapters]


def test_every_part_opens_with_its_notation_page():
    parts = book_parts()
    assert len(parts) == 5
    for caption, first, chapters in parts:
        assert first.startswith("parts/"), f"{caption} starts with {first}"
        text = (ROOT / f"{first}.md").read_text()
        table = TABLE.search(text)
        assert table, f"{first}.md has no <!-- notation:start/end --> block"
        rows = [line for line in table.group(1).splitlines() if line.startswith("| ")]
        assert len(rows) >= 8, f"{first}.md: notation table has {len(rows)} rows"
        # every chapter of the part is linked from its opening page
        for chapter in chapters:
            assert f"(../{chapter}.ipynb)" in text, (first, chapter)


def test_appendix_gathers_every_part_table():
    text = NOTATION.read_text()
    for _, first, _ in book_parts():
        include = (f"```{{include}} ../{first}.md\n:start-after: <!-- notation:start -->\n"
                   f":end-before: <!-- notation:end -->\n```")
        assert include in text, f"appendix/notation.md does not include {first}.md's table"


CODE_NAME = re.compile(r"`(seqlearn(?:\.\w+)+)`")
FIELD_OF = re.compile(r"`(\w+)`(?: `\([^`]*\)`)? of `(seqlearn(?:\.\w+)+)`")


def _resolve(dotted: str):
    """The object a dotted ``seqlearn.module.Name[.attr]`` names (ImportError or
    AttributeError when it does not exist)."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(dotted)


def _has_field(obj, name: str) -> bool:
    """Whether ``name`` is a field, attribute, parameter or documented local of ``obj``."""
    import inspect

    if hasattr(obj, name) or name in getattr(obj, "_fields", ()):
        return True
    try:
        if name in inspect.signature(obj).parameters:
            return True
    except (TypeError, ValueError):
        pass
    try:
        return re.search(rf"\b{re.escape(name)}\b", inspect.getsource(obj)) is not None
    except (TypeError, OSError):
        return False


def test_notation_tables_name_code_that_exists():
    """Every `seqlearn.…` name in a part's notation table exists, and every "`field` of
    `seqlearn.…`" is a field, parameter or name of that object (a table once named
    `log_prob` of BeamResult, whose field is `log_probs`)."""
    for _, first, _ in book_parts():
        table = TABLE.search((ROOT / f"{first}.md").read_text()).group(1)
        for dotted in CODE_NAME.findall(table):
            _resolve(dotted)
        for field, dotted in FIELD_OF.findall(table):
            assert _has_field(_resolve(dotted), field), f"{first}.md: `{field}` of {dotted}"
