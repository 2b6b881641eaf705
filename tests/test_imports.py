"""Lazy imports (issue 15, CLI start-up time): ``import fastsvm`` and the command line's
argument parsing load neither scikit-learn nor numba, a command loads the solver it uses
only, and every public name still resolves.  Each check runs in a fresh interpreter."""

import json
import subprocess
import sys

import pytest

import fastsvm

#: The heavy dependencies (1-2 s of imports) and fastsvm's solver families.
HEAVY = ("sklearn", "numba", "scipy")
FAMILIES = ("fastsvm.bounds", "fastsvm.bsgd", "fastsvm.margin_sgd", "fastsvm.nystrom")


def _loaded_by(code):
    """The modules of HEAVY and FAMILIES that running ``code`` loads, in a fresh interpreter
    (standard output of ``code`` is discarded)."""
    probe = ("import contextlib, io, json, sys\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             + "".join(f"    {line}\n" for line in code.splitlines())
             + f"print(json.dumps([m for m in {HEAVY + FAMILIES!r} if m in sys.modules]))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return set(json.loads(run.stdout.splitlines()[-1]))


def test_import_fastsvm_loads_no_solver():
    assert _loaded_by("import fastsvm") == set()


@pytest.mark.parametrize("argv, status", [
    (["--help"], 0), (["--version"], 0), (["train", "--help"], 0), (["predict", "--help"], 0),
    (["warmup", "--help"], 0), (["train"], 2), (["train", "--solver", "svc", "x"], 2),
    (["train", "-c", "one", "x"], 2), (["frobnicate"], 2),
])
def test_cli_help_and_usage_errors_load_no_solver(argv, status):
    assert _loaded_by(f"from fastsvm.cli import main\n"
                      f"assert main({argv!r}) == {status}") == set()


def test_importing_an_estimator_loads_its_family_only():
    assert _loaded_by("from fastsvm import PegasosSVC") & set(FAMILIES) == {"fastsvm.bounds"}
    assert _loaded_by("import fastsvm\nfastsvm.BudgetSVC") & set(FAMILIES) == {"fastsvm.bsgd"}


def test_cli_train_and_predict_load_the_solver_used_only(tmp_path):
    data = tmp_path / "train.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} 1:{i % 7} 2:{i % 3}\n" for i in range(40)))
    model = tmp_path / "model.npz"
    train = (f"from fastsvm.cli import main\n"
             f"assert main(['train', '-q', '--solver', 'pegasos', {str(data)!r}, "
             f"{str(model)!r}]) == 0")
    assert _loaded_by(train) & set(FAMILIES) == {"fastsvm.bounds"}
    predict = (f"from fastsvm.cli import main\n"
               f"assert main(['predict', '-q', {str(data)!r}, {str(model)!r}, "
               f"{str(tmp_path / 'out.txt')!r}]) == 0")
    assert _loaded_by(predict) & set(FAMILIES) == {"fastsvm.bounds"}


def test_every_public_name_resolves():
    from fastsvm.bounds import HuberSVC, PegasosSVC
    from fastsvm.bsgd import BudgetSVC
    from fastsvm.margin_sgd import MarginSGDSVC
    from fastsvm.nystrom import NystromSVC

    expected = {"BudgetSVC": BudgetSVC, "HuberSVC": HuberSVC, "MarginSGDSVC": MarginSGDSVC,
                "NystromSVC": NystromSVC, "PegasosSVC": PegasosSVC}
    assert sorted(fastsvm.__all__) == sorted([*expected, "__version__"])
    for name, cls in expected.items():
        assert getattr(fastsvm, name) is cls
        assert name in dir(fastsvm)
    namespace = {}
    exec("from fastsvm import *", namespace)
    assert {name: namespace[name] for name in expected} == expected
    assert namespace["__version__"] == fastsvm.__version__
    with pytest.raises(AttributeError, match="no attribute 'SVC'"):
        fastsvm.SVC  # noqa: B018
    with pytest.raises(ImportError):
        exec("from fastsvm import SVC", {})
