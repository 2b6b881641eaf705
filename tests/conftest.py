"""Test-suite configuration: hypothesis profiles.

The default profile ``ci`` is derandomised (the same examples on every run,
so CI is reproducible) with no deadline (the first example of a test pays
numba's compilation).  ``FASTSVM_HYPOTHESIS_PROFILE=explore`` draws new,
more numerous examples, for hunting bugs locally.

The fixture ``csr_loops`` keeps CSR input CSR in the compiled loops however
dense it is, for the tests that check those loops against dense input or an
oracle (by default CSR input with 25 % stored entries or more is packed dense:
``fastsvm._options.PACKED_DENSE_FROM``).
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from fastsvm import _options

settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", max_examples=500, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("FASTSVM_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def csr_loops(monkeypatch):
    """CSR input reaches the compiled loops as CSR arrays, however many entries it stores."""
    monkeypatch.setattr(_options, "PACKED_DENSE_FROM", np.inf)
