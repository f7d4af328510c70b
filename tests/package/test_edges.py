"""The edge-case matrix (``edges.py``, rows in ``edge_entries.py``).

``test_edge_matrix`` runs one cell of the matrix per test: every concrete call of one
column (sizes 0 and 1, float16, NaN entries, ...) for one public name, each judged by
``edges.verdict``: the documented value, or ``ValueError``/``TypeError`` naming the
argument. The problems the fuzzer (``tools/fuzz_edges.py``) found are pinned down, one
by one with the exact answer expected, in the test file of the module they were found in
(the sections "edge cases")."""

from __future__ import annotations

import functools

import pytest

import edges
from edge_entries import ENTRIES


CELLS = [
    (name, kind)
    for name, entry in sorted(ENTRIES.items())
    if not entry.record
    for kind, count in edges.columns(entry).items()
    if count
]


@functools.lru_cache(maxsize=None)
def _base(name: str) -> edges.Outcome:
    """The valid call of ``name``, run once for all its cells."""
    return edges.run(ENTRIES[name], None)


@pytest.mark.parametrize("name, kind", CELLS, ids=[f"{n[9:]}-{k}" for n, k in CELLS])
def test_edge_matrix(name, kind):
    entry = ENTRIES[name]
    base = _base(name)
    assert base.error is None, f"the valid call of {name} fails: {base.error!r}"
    wrong = []
    for case in edges.cases(entry):
        if case.kind == kind:
            found = edges.verdict(entry, case, 0, base)
            if found:
                wrong.append(f"{case.label}: {found}")
    assert not wrong, f"{name}, column {kind}:\n" + "\n".join(wrong)


def test_the_matrix_has_a_cell_for_every_column():
    used = {kind for _, kind in CELLS}
    assert used == set(
        edges.KINDS
    ), f"columns no row exercises: {set(edges.KINDS) - used}"
