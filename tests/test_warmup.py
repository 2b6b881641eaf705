"""``fastsvm warmup`` fills numba's disk cache so that no later fit compiles anything."""

import json
import subprocess
import sys

from fastsvm.cli import main
from fastsvm.warmup import KERNEL_MODULES, compiled_kernels

#: Fits of every estimator on data of other shapes, sizes and label counts than the
#: warm-up's, in every input form; prints the signatures each kernel had to compile.
FITS = """
import json, warnings
import numpy as np, scipy.sparse as sp
from sklearn.datasets import make_classification
from fastsvm import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC, PegasosSVC
from fastsvm.warmup import compiled_kernels

warnings.simplefilter("ignore")
X, y = make_classification(1200, 30, n_informative=10, n_classes=3, random_state=1)
text = sp.random(1200, 3000, density=0.004, format="csr", random_state=1)
text = sp.hstack([sp.csr_matrix(y[:, None] + 1.0), text], format="csr")
estimators = [BudgetSVC(budget=100, epochs=2), BudgetSVC(budget=100, epochs=2, multi_class="ovr"),
              NystromSVC(n_components=100, solver="assg"),
              NystromSVC(n_components=100, solver="pegasos", landmarks="leverage"),
              NystromSVC(n_components=100, solver="dcd"),
              HuberSVC(max_iter=50), PegasosSVC(max_iter=50),
              PegasosSVC(kernel="rbf", max_iter=50), MarginSGDSVC()]
for data in (X, X.astype(np.float32), sp.csr_matrix(X), text, text.astype(np.float32)):
    for clf in estimators:
        clf.fit(data, y).predict(data)
        if hasattr(clf, "transform"):
            clf.transform(data)
print(json.dumps({name: [str(sig) for sig in kernel.stats.cache_misses]
                  for name, kernel in compiled_kernels().items() if kernel.stats.cache_misses}))
"""


def test_compiled_kernels_lists_every_module():
    kernels = compiled_kernels()
    assert {name.rsplit(".", 1)[0] for name in kernels} == set(KERNEL_MODULES)
    assert "fastsvm.bsgd._kernels.sgd_steps" in kernels


def test_warmed_up_fits_compile_nothing():
    """After the warm-up (a no-op when the cache is already warm), fits in a new process
    load every kernel from the cache: the warm-up covers every compiled code path."""
    subprocess.run([sys.executable, "-m", "fastsvm", "warmup", "-q"], check=True, timeout=600)
    result = subprocess.run([sys.executable, "-c", FITS], capture_output=True, text=True,
                            timeout=600, check=True)
    compiled = json.loads(result.stdout.strip().splitlines()[-1])
    assert compiled == {}


def test_cli_warmup_reports_each_solver(capsys):
    assert main(["warmup"]) == 0
    out = capsys.readouterr().out
    for name in ("BudgetSVC", "NystromSVC", "HuberSVC", "PegasosSVC", "MarginSGDSVC"):
        assert name in out
    assert "compiled kernels cached" in out


def test_kernel_cache_falls_back_to_a_temporary_folder(tmp_path):
    """numba caches in NUMBA_CACHE_DIR, the package's folder or the user's cache folder;
    where none can be written (a read-only install, a service user without a home) it had
    raised at import, so fastsvm points it at a temporary folder, or compiles uncached."""
    from fastsvm._cache import choose_cache

    (tmp_path / "file").write_text("")
    blocked = str(tmp_path / "file" / "folder")        # under a file: never writable
    fallback = str(tmp_path / "temporary")
    assert choose_cache("", str(tmp_path), blocked, fallback) == (True, None)
    assert choose_cache(blocked, blocked, str(tmp_path / "user"), fallback) == (True, None)
    assert choose_cache(blocked, blocked, blocked, fallback) == (True, fallback)
    assert choose_cache("", blocked, blocked, blocked) == (False, None)


def test_estimators_fit_without_any_writable_cache_folder(tmp_path):
    """In a process where no folder can be written (stubbed: the package folder here is the
    checkout's), the kernels compile uncached, with one warning."""
    (tmp_path / "file").write_text("")
    blocked = str(tmp_path / "file" / "folder")
    script = (
        "import warnings, numpy as np\n"
        "import fastsvm._cache as c\n"
        "c._writable = lambda folder: False\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from fastsvm import HuberSVC\n"
        "import fastsvm._options as o\n"
        "X = np.random.default_rng(0).normal(size=(40, 3)); y = (X[:, 0] > 0).astype(int)\n"
        "print(o.KERNEL_CACHE, HuberSVC().fit(X, y).score(X, y) > 0.9,\n"
        "      sum('numba' in str(w.message) for w in caught))\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": blocked, "TMPDIR": blocked}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    assert out == ["False", "True", "1"]
