"""Every public name of seqlearn has a property test (registered with
``properties.covers``) and a row in the edge-case matrix (``edge_entries.ENTRIES``, run
by ``test_edges.py``)."""

import importlib
import pathlib
from collections.abc import Collection

from edge_entries import ENTRIES
from properties import COVERED, public_names

HERE = pathlib.Path(__file__)

# Figures take sizes and labels, no tensors: their bad inputs are tried in their own
# property tests, and an edge-case entry is optional.
FIGURES = "seqlearn.diagrams."


def register_property_tests() -> None:
    """Import the test modules that register property tests (``@covers``): importing one
    registers its tests."""
    for path in sorted(HERE.parent.glob("test_*.py")):
        if path != HERE and "@covers(" in path.read_text():
            importlib.import_module(path.stem)


def assert_registered(names: list[str], registered: Collection[str], what: str,
                      how: str, where: str) -> None:
    """Every name of ``names`` is in ``registered`` (else: ``how`` to add one), and
    ``registered`` names only public names."""
    missing = [name for name in names if name not in registered]
    assert not missing, (
        f"{len(missing)} of {len(names)} public names of seqlearn have no {what}: "
        f"{', '.join(missing)}. {how}")
    stale = sorted(set(registered) - set(public_names()))
    assert not stale, f"{where} that are not public names of seqlearn: {stale}"


def test_every_public_name_has_a_property_test():
    register_property_tests()
    assert_registered(
        public_names(), COVERED, "property test",
        "Add one in tests/package/test_<module>.py and register it with "
        "@covers(\"seqlearn.<module>.<name>\") from tests/package/properties.py "
        "(valid inputs checked against a torch/NumPy reference or a loop, invalid "
        "inputs raising ValueError/TypeError).", "@covers names")


def test_every_public_name_has_an_edge_case_entry():
    assert_registered(
        [name for name in public_names() if not name.startswith(FIGURES)], ENTRIES,
        "edge-case entry",
        "Add one in tests/package/edge_entries.py: one valid call with typed "
        "arguments (Floats, Ids, Mask, Flag, Int, Real, Fn, Obj ...) over named "
        "dimensions, so that test_edges.py can call it at sizes 0 and 1, in float16, "
        "with NaN, inf, NumPy arrays, bad flags, ids and masks (record=True for a "
        "plain record).",
        "edge-case entries")
