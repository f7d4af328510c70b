"""Hypothesis profiles for the property tests (the `@given` tests of tests/package).

``make test`` runs the ``default`` profile; ``make test-deep`` sets
``SEQLEARN_HYPOTHESIS_PROFILE=deep``: 20 times the examples. Both are derandomized and keep
no example database, so every run draws the same examples.
"""

import os

from hypothesis import HealthCheck, settings

from properties import DEEP_FACTOR, EXAMPLES

_common = dict(deadline=None, derandomize=True, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("default", max_examples=EXAMPLES, **_common)
settings.register_profile("deep", max_examples=EXAMPLES * DEEP_FACTOR, **_common)
settings.load_profile(os.environ.get("SEQLEARN_HYPOTHESIS_PROFILE", "default"))
