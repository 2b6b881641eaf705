"""Test-suite configuration: hypothesis profiles.

The default profile ``ci`` is derandomised (the same examples on every run,
so CI is reproducible) with no deadline (the first example of a test pays
numba's compilation).  ``FASTSVM_HYPOTHESIS_PROFILE=explore`` draws new,
more numerous examples, for hunting bugs locally.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", max_examples=500, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("FASTSVM_HYPOTHESIS_PROFILE", "ci"))
