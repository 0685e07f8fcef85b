"""The hypothesis profile of the property tests: derandomized (a fixed seed, so CI runs the
same examples every time), no example database, no deadline (machines are noisy), and a
bounded number of examples per test, sized so the whole property suite runs in well under
a minute on two cores. ``EMBER_HYPOTHESIS_PROFILE=deep`` runs 20 times more examples with
fresh randomness, for hunting bugs locally."""
from __future__ import annotations

import os

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the property tests skip, naming the package
    settings = None

if settings is not None:
    _COMMON = dict(deadline=None, database=None, print_blob=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                          HealthCheck.filter_too_much])
    settings.register_profile("ci", derandomize=True, **_COMMON)
    settings.register_profile("deep", derandomize=False, **_COMMON)
    settings.load_profile(os.environ.get("EMBER_HYPOTHESIS_PROFILE", "ci"))
