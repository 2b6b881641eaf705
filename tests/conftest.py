"""Test-suite configuration: hypothesis profiles.

The default profile ``ci`` is derandomised (the same examples on every run,
so CI is reproducible) with no deadline (the first example of a test pays
numba's compilation).  ``FASTSVM_HYPOTHESIS_PROFILE=explore`` draws new,
more numerous examples, for hunting bugs locally.

The fixture ``csr_loops`` keeps CSR input CSR in the compiled loops however
dense it is, for the tests that check those loops against dense input or an
oracle (by default CSR input with 25 % stored entries or more is packed dense:
``fastsvm._options.PACKED_DENSE_FROM``).

The marker ``data(*names)`` names the data sets of :data:`fastsvm.datasets.DATASETS`
a test reads from the data folder (:func:`fastsvm.datasets.get_data_dir`).  Without
them the test is skipped, or, with ``FASTSVM_REQUIRE_DATA`` set (``./run test`` and so
CI set it), fails: there a missing folder must not pass as skipped accuracy floors.
"""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from fastsvm import _options
from fastsvm.datasets import DATASETS, get_data_dir

settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", max_examples=500, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("FASTSVM_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def csr_loops(monkeypatch):
    """CSR input reaches the compiled loops as CSR arrays, however many entries it stores."""
    monkeypatch.setattr(_options, "PACKED_DENSE_FROM", np.inf)


def _missing_data(names):
    """The data sets among ``names`` whose files are not all in the data folder."""
    directory = get_data_dir()
    return [name for name in names
            if not all((directory / f.name).is_file() or (directory / f.download_name).is_file()
                       for f in DATASETS[name].files)]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Skip (or, under FASTSVM_REQUIRE_DATA, fail) a test whose ``data`` marker names a set
    missing from the data folder, before its fixtures load it."""
    missing = _missing_data([name for mark in item.iter_markers("data") for name in mark.args])
    if missing:
        message = (f"data sets {missing} not in the data folder {get_data_dir()} (set "
                   "FASTSVM_DATA, or fetch them with fastsvm.datasets.fetch_dataset)")
        if os.environ.get("FASTSVM_REQUIRE_DATA"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
