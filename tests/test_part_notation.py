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
