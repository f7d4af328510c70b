"""Every public name of seqlearn has a property test (registered with ``properties.covers``)
and a row in the edge-case matrix (``edge_entries.ENTRIES``, run by ``test_edges.py``)."""

import importlib
import pathlib

from edge_entries import ENTRIES
from properties import COVERED, public_names


def test_every_public_name_has_a_property_test():
    for path in sorted(pathlib.Path(__file__).parent.glob("test_properties_*.py")):
        importlib.import_module(path.stem)  # registers its @covers(...) tests
    names = public_names()
    missing = [name for name in names if name not in COVERED]
    assert not missing, (
        f"{len(missing)} of {len(names)} public names of seqlearn have no property test: "
        f"{', '.join(missing)}. Add one in tests/package/test_properties_<module>.py and "
        "register it with @covers(\"seqlearn.<module>.<name>\") from tests/package/properties.py "
        "(valid inputs checked against a torch/NumPy reference or a loop, invalid inputs "
        "raising ValueError/TypeError).")
    stale = sorted(set(COVERED) - set(names))
    assert not stale, f"@covers names that are not public names of seqlearn: {stale}"


# Figures take sizes and labels, no tensors: their bad inputs are tried in
# test_properties_diagrams.py.
FIGURES = "seqlearn.diagrams."


def test_every_public_name_has_an_edge_case_entry():
    names = [name for name in public_names() if not name.startswith(FIGURES)]
    missing = [name for name in names if name not in ENTRIES]
    assert not missing, (
        f"{len(missing)} of {len(names)} public names of seqlearn have no edge-case entry: "
        f"{', '.join(missing)}. Add one in tests/package/edge_entries.py: one valid call "
        "with typed arguments (Floats, Ids, Mask, Flag, Int, Real, Fn, Obj ...) over named "
        "dimensions, so that test_edges.py can call it at sizes 0 and 1, in float16, with "
        "NaN, inf, NumPy arrays, bad flags, ids and masks (record=True for a plain record).")
    stale = sorted(set(ENTRIES) - set(names))
    assert not stale, f"edge-case entries that are not public names of seqlearn: {stale}"
