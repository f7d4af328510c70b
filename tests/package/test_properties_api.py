"""Every public name of seqlearn has a property test (registered with ``properties.covers``)."""

import importlib
import pathlib

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
