"""Binder's slim environment stays in step with the book's full one."""

from __future__ import annotations

import re

from layout import ROOT

PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s;#]+)")


def pins(path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            name = re.sub(r"[-_.]+", "-", match.group(1)).lower()
            found[name] = match.group(2)
    return found


def test_every_binder_pin_equals_the_book_pin():
    binder, book = pins(ROOT / "binder" / "requirements.txt"), pins(ROOT / "requirements.txt")
    assert "torch" in binder and "jupyterlab-myst" in binder
    # torch's CPU wheel carries a local version label: 2.13.0+cpu is the build of 2.13.0
    binder["torch"] = binder["torch"].split("+")[0]
    different = {name: (version, book.get(name)) for name, version in binder.items()
                 if book.get(name) != version}
    assert different == {}, f"binder/requirements.txt differs from requirements.txt: {different}"


def test_binder_is_the_runtime_only():
    binder = pins(ROOT / "binder" / "requirements.txt")
    build_and_test = {"jupyter-book", "sphinx", "pytest", "nbval", "selenium", "hypothesis"}
    assert build_and_test.isdisjoint(binder), build_and_test & set(binder)
    text = (ROOT / "binder" / "requirements.txt").read_text()
    assert "-e ." not in text.split()            # the repository is installed by postBuild
    assert "download.pytorch.org/whl/cpu" in text  # CPU torch, no CUDA libraries
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
