"""`make` stops at once, with a message, on a Python the pinned environment cannot use."""

from __future__ import annotations

import sys

import pytest

from layout import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import check_python  # noqa: E402


@pytest.mark.parametrize("version, ok", [((3, 10, 13), False), ((3, 11, 1), False),
                                         ((3, 11, 2), True), ((3, 13, 9), True),
                                         ((3, 14, 0), False)])
def test_supported_versions(monkeypatch, capsys, version, ok):
    monkeypatch.setattr(check_python.sys, "version_info", version + ("final", 0))
    assert (check_python.main() == 0) is ok
    if not ok:
        assert "needs Python 3.11.2 to 3.13" in capsys.readouterr().err
