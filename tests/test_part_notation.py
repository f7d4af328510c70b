"""Every numbered part opens with a page whose notation table the appendix gathers."""

from __future__ import annotations

import re

import yaml

from layout import ROOT

NOTATION = ROOT / "appendix" / "notation.md"
TABLE = re.compile(r"<!-- notation:start -->\n(.*?)<!-- notation:end -->", re.S)


def numbered_parts() -> list[dict]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [p for p in toc["parts"] if p.get("numbered")]


def test_every_part_opens_with_its_notation_page():
    parts = numbered_parts()
    assert len(parts) == 5
    for part in parts:
        first = part["chapters"][0]["file"]
        assert first.startswith("parts/"), f"{part['caption']} starts with {first}"
        text = (ROOT / f"{first}.md").read_text()
        table = TABLE.search(text)
        assert table, f"{first}.md has no <!-- notation:start/end --> block"
        rows = [line for line in table.group(1).splitlines() if line.startswith("| ")]
        assert len(rows) >= 8, f"{first}.md: notation table has {len(rows)} rows"
        # every chapter of the part is linked from its opening page
        for entry in part["chapters"][1:]:
            assert f"(../{entry['file']}.ipynb)" in text, (first, entry["file"])


def test_appendix_gathers_every_part_table():
    text = NOTATION.read_text()
    for part in numbered_parts():
        first = part["chapters"][0]["file"]
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
    for part in numbered_parts():
        first = part["chapters"][0]["file"]
        table = TABLE.search((ROOT / f"{first}.md").read_text()).group(1)
        for dotted in CODE_NAME.findall(table):
            _resolve(dotted)
        for field, dotted in FIELD_OF.findall(table):
            assert _has_field(_resolve(dotted), field), f"{first}.md: `{field}` of {dotted}"
