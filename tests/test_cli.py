"""Tests for the ``fastsvm`` command line (fastsvm.cli)."""

import os
import resource
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification

from fastsvm.cli import format_label, main
from fastsvm.persistence import load_model


@pytest.fixture(scope="module")
def dataset():
    X, y = make_classification(
        n_samples=300, n_features=5, n_informative=3, n_redundant=0,
        n_clusters_per_class=1, random_state=0,
    )
    X[:, -1] = np.where(np.abs(X[:, -1]) > 1.0, X[:, -1], 0.0)  # some zeros, as in sparse data
    return X, np.where(y == 1, 1, -1)


@pytest.fixture
def train_file(dataset, tmp_path):
    X, y = dataset
    path = tmp_path / "train.svm"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return path


@pytest.fixture
def trained(train_file, tmp_path, capsys):
    model = tmp_path / "model.npz"
    assert main(["train", "-q", "-B", "20", "-e", "2", "-s", "0", str(train_file), str(model)]) == 0
    capsys.readouterr()
    return model


def _error_line(capsys):
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert lines, "nothing on stderr"
    assert lines[-1].startswith("fastsvm: error: "), err
    assert "Traceback" not in err
    return out, lines[-1]


# --------------------------------------------------------------------------
# Round trip
# --------------------------------------------------------------------------


def test_train_then_predict_round_trip(dataset, train_file, tmp_path, capsys):
    X, y = dataset
    model_path = tmp_path / "m.npz"
    rc = main(["train", "-c", "2", "-g", "0.2", "-B", "20", "-e", "2", "-s", "1",
               "-m", "lookup-h", str(train_file), str(model_path)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "300 samples" in out
    assert "Training accuracy" in out
    assert "Support vectors" in out
    assert "Training time" in out
    assert str(model_path) in out
    assert "Traceback" not in err

    model = load_model(model_path)
    assert model.get_params()["C"] == 2.0
    assert model.get_params()["gamma"] == 0.2
    assert model.get_params()["budget"] == 20
    assert model.get_params()["merge_method"] == "lookup-h"
    assert model.get_params()["random_state"] == 1
    assert model.classes_.dtype.kind == "i"  # integral LIBSVM labels -> integer classes
    np.testing.assert_array_equal(model.classes_, [-1, 1])

    out_path = tmp_path / "pred.txt"
    rc = main(["predict", str(train_file), str(model_path), str(out_path)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    lines = out_path.read_text().splitlines()
    expected = model.predict(X)
    assert lines == [str(int(v)) for v in expected]
    assert set(lines) <= {"1", "-1"}
    acc = np.mean(expected == y)
    assert out.startswith("Accuracy = ")
    assert f"{100 * acc:.4f}%" in out
    assert f"({int(round(acc * 300))}/300)" in out


@pytest.mark.parametrize("dash", [[], ["-"]])
def test_predict_to_stdout(dataset, train_file, trained, capsys, tmp_path, monkeypatch, dash):
    X, _ = dataset
    monkeypatch.chdir(tmp_path)
    assert main(["predict", str(train_file), str(trained)] + dash) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [str(int(v)) for v in load_model(trained).predict(X)]
    assert "Accuracy" in err  # the report does not mix with the labels
    assert not (tmp_path / "-").exists()        # '-' is standard output, not a file


def test_default_model_file_in_cwd(train_file, tmp_path, monkeypatch, capsys):
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    assert main(["train", "-q", "-B", "10", str(train_file)]) == 0
    assert (workdir / "train.svm.model.npz").exists()
    assert capsys.readouterr() == ("", "")


def test_quiet_prints_nothing(train_file, tmp_path, capsys):
    model = tmp_path / "q.npz"
    assert main(["train", "-q", "-B", "10", "--maintenance", "remove", str(train_file), str(model)]) == 0
    assert capsys.readouterr() == ("", "")
    assert load_model(model).get_params()["maintenance"] == "remove"
    assert load_model(model).get_params()["verbose"] == 0
    assert main(["predict", "-q", str(train_file), str(model), str(tmp_path / "out.txt")]) == 0
    assert capsys.readouterr() == ("", "")
    assert len((tmp_path / "out.txt").read_text().splitlines()) == 300


def test_not_quiet_is_verbose(train_file, tmp_path, capsys):
    model = tmp_path / "v.npz"
    assert main(["train", "-B", "10", str(train_file), str(model)]) == 0
    capsys.readouterr()
    assert load_model(model).get_params()["verbose"] == 1


def test_predict_pads_missing_trailing_features(dataset, trained, tmp_path, capsys):
    X, y = dataset
    # LIBSVM files omit trailing zero features: a file whose last column is all zeros
    X0 = X.copy()
    X0[:, -1] = 0.0
    path = tmp_path / "short.svm"
    dump_svmlight_file(X0, y, str(path), zero_based=False)
    out_path = tmp_path / "pred.txt"
    assert main(["predict", "-q", str(path), str(trained), str(out_path)]) == 0
    expected = load_model(trained).predict(X0)
    assert out_path.read_text().splitlines() == [str(int(v)) for v in expected]


def test_multiclass_and_fractional_labels(tmp_path, capsys):
    X, y = make_classification(n_samples=150, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=3)
    labels = np.array([0.5, 2.0, 7.25])[y]
    data = tmp_path / "multi.svm"
    dump_svmlight_file(X, labels, str(data), zero_based=False)
    model = tmp_path / "multi.npz"
    assert main(["train", "-q", "-B", "10", str(data), str(model)]) == 0
    out_path = tmp_path / "pred.txt"
    assert main(["predict", str(data), str(model), str(out_path)]) == 0
    out, _ = capsys.readouterr()
    lines = out_path.read_text().splitlines()
    assert set(lines) <= {"0.5", "2", "7.25"}
    # non-integral labels are not accepted as classes by scikit-learn: kept as their text
    fitted = load_model(model)
    assert sorted(fitted.classes_.tolist()) == ["0.5", "2", "7.25"]
    assert lines == [format_label(v) for v in fitted.predict(X)]
    acc = np.mean(fitted.predict(X).astype(float) == labels)
    assert f"Accuracy = {100 * acc:.4f}%" in out
    assert fitted.multi_class == "auto" and np.all(fitted.n_support_ <= 10)   # 10 per pair
    assert len(fitted.support_vectors_) > 10        # 3 pairs (one-vs-one up to 30 classes)
    shared, separate = tmp_path / "shared.npz", tmp_path / "separate.npz"
    assert main(["train", "-q", "-B", "10", "--multi-class", "ovr", str(data),
                 str(shared)]) == 0
    fitted = load_model(shared)
    assert fitted.multi_class == "ovr" and fitted.shared_budget == "auto"
    assert len(fitted.support_vectors_) <= 10        # 3 classes: one budget for all
    capsys.readouterr()
    assert main(["train", "-q", "-B", "10", "--multi-class", "ovr", "--separate-budgets",
                 str(data), str(separate)]) == 0
    assert "warning" not in capsys.readouterr().err
    assert not load_model(separate).shared_budget
    assert len(load_model(separate).support_vectors_) > 10
    for options, n_models in (([], 3), (["--multi-class", "ovr"], 3)):   # 3 pairs, 3 classes
        margin = tmp_path / "margin.npz"
        assert main(["train", "-q", "--solver", "margin-sgd", "-s", "0", *options, str(data),
                     str(margin)]) == 0
        fitted = load_model(margin)
        assert fitted.multi_class == (options[1] if options else "auto")
        assert fitted.training_info_["multi_class"] == (options[1] if options else "ovo")
        assert fitted.dual_coef_.shape[0] == n_models
        nystrom = tmp_path / "nystrom.npz"
        assert main(["train", "-q", "--solver", "nystrom", "-n", "30", *options, str(data),
                     str(nystrom)]) == 0
        fitted = load_model(nystrom)
        assert fitted.multi_class == (options[1] if options else "auto")
        assert fitted.coef_.shape[0] == n_models
        assert main(["predict", "-q", str(data), str(nystrom), str(out_path)]) == 0
        assert out_path.read_text().splitlines() == [format_label(v) for v in fitted.predict(X)]
        pegasos = tmp_path / "pegasos.npz"
        assert main(["train", "-q", "--solver", "pegasos", "-t", "rbf", "--max-iter", "300",
                     "-s", "0", *options, str(data), str(pegasos)]) == 0
        fitted = load_model(pegasos)
        assert fitted.multi_class == (options[1] if options else "auto")
        assert fitted.training_info_["multi_class"] == (options[1] if options else "ovo")
        assert main(["predict", "-q", str(data), str(pegasos), str(out_path)]) == 0
        assert out_path.read_text().splitlines() == [format_label(v) for v in fitted.predict(X)]


def test_separate_budgets_without_one_vs_rest_models_is_a_warning(train_file, tmp_path,
                                                                   capsys):
    """--separate-budgets acts on one-vs-rest models of more than two classes only; where the
    split makes one model or one-vs-one pairs it said nothing and changed nothing."""
    X, y = make_classification(n_samples=150, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=3)
    three = tmp_path / "three.svm"
    dump_svmlight_file(X, y, str(three), zero_based=False)
    model = tmp_path / "m.npz"
    for data, told in ((train_file, "one model"), (three, "one-vs-one pairs")):
        capsys.readouterr()
        assert main(["train", "-q", "-B", "10", "--separate-budgets", str(data),
                     str(model)]) == 0
        err = capsys.readouterr().err
        assert "fastsvm: warning: --separate-budgets has no effect" in err and told in err


@pytest.mark.parametrize("options, unread", [
    (["-t", "linear", "-g", "2", "-d", "2", "-r", "1"], ["-g/--gamma", "-d/--degree",
                                                        "-r/--coef0"]),
    (["-B", "10", "-d", "4", "-r", "1"], ["-d/--degree", "-r/--coef0"]),
    (["--solver", "pegasos", "-g", "2"], ["-g/--gamma"]),
    (["-B", "10", "--maintenance", "remove", "-m", "gss"], ["-m/--merge-method"]),
    (["-B", "10", "-g", "0.5", "-m", "gss"], []),
    (["-t", "poly", "-g", "0.5", "-d", "2", "-r", "1", "--maintenance", "remove"], []),
    (["-t", "sigmoid", "--solver", "nystrom", "-g", "0.1", "-r", "-1"], []),
])
def test_options_the_model_does_not_read_are_a_warning(options, unread, train_file, tmp_path,
                                                       capsys):
    """An option the chosen kernel or maintenance does not read (a model file identical to
    the one without it) had been accepted without a word."""
    capsys.readouterr()
    assert main(["train", "-q", *options, str(train_file), str(tmp_path / "m.npz")]) == 0
    err = capsys.readouterr().err
    named = [flags for flags in ("-g/--gamma", "-d/--degree", "-r/--coef0", "-m/--merge-method")
             if f"fastsvm: warning: option {flags} has no effect" in err]
    assert named == unread, err


def test_labels_beyond_float64_integers_are_an_error(tmp_path, capsys):
    """Labels are read as float64, where 2^53 + 1 reads as 2^53: two such classes merged into
    one without a word (three classes trained as two)."""
    big = 2**53
    data = tmp_path / "ids.svm"
    data.write_text("".join(f"{label} 1:{x}\n" for label, x in
                            [(big, 0.1), (big + 1, 0.9), (big + 1, 1.1), (7, 2.0), (7, 2.1),
                             (big, 0.2)]))
    assert main(["train", "-q", str(data), str(tmp_path / "m.npz")]) == 1
    assert "2^53" in _error_line(capsys)[1]
    data.write_text("".join(f"{label} 1:{x}\n" for label, x in
                            [(big - 1, 0.1), (big - 2, 0.9), (7, 2.0), (7, 2.1)]))
    assert main(["train", "-q", "-B", "4", str(data), str(tmp_path / "m.npz")]) == 0
    assert load_model(tmp_path / "m.npz").classes_.tolist() == [7, big - 2, big - 1]


def test_format_label():
    assert format_label(1.0) == "1"
    assert format_label(-1.0) == "-1"
    assert format_label(np.float64(3.0)) == "3"
    assert format_label(np.int64(7)) == "7"
    assert format_label(0.25) == "0.25"
    assert format_label("cat") == "cat"


# --------------------------------------------------------------------------
# Errors: exit 1 with "fastsvm: error: ..." (argparse usage errors: exit 2)
# --------------------------------------------------------------------------


def test_missing_data_file(tmp_path, capsys):
    missing = tmp_path / "missing.svm"
    assert main(["train", "-q", str(missing), str(tmp_path / "m.npz")]) == 1
    _, line = _error_line(capsys)
    assert "missing.svm" in line
    assert not (tmp_path / "m.npz").exists()


def test_corrupt_data_file(tmp_path, capsys):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 2:abc\n-1 garbage\n")
    assert main(["train", "-q", str(bad), str(tmp_path / "m.npz")]) == 1
    _, line = _error_line(capsys)
    assert "bad.svm" in line


@pytest.mark.parametrize(
    "option, match",
    [
        (["-B", "1"], "budget"),
        (["-c", "0"], "C"),
        (["-c", "-3"], "C"),
        (["-c", "nan"], "C"),
        (["-g", "-1"], "gamma"),
        (["-e", "0"], "epochs"),
    ],
)
def test_bad_option_values(train_file, tmp_path, capsys, option, match):
    assert main(["train", "-q", *option, str(train_file), str(tmp_path / "m.npz")]) == 1
    _, line = _error_line(capsys)
    assert match in line
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["train"],
        ["frobnicate"],
        ["train", "-B", "many", "x.svm"],
        ["train", "-g", "auto-ish", "x.svm"],
        ["train", "-m", "nearest", "x.svm"],
        ["train", "--maintenance", "shrink", "x.svm"],
        ["predict", "x.svm"],
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    _, err = capsys.readouterr()
    assert "usage:" in err


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    assert "train" in capsys.readouterr().out
    assert main(["train", "--help"]) == 0
    assert "--budget" in capsys.readouterr().out


def test_missing_model_file(train_file, tmp_path, capsys):
    assert main(["predict", str(train_file), str(tmp_path / "none.npz")]) == 1
    _, line = _error_line(capsys)
    assert "none.npz" in line


def test_corrupt_model_file(train_file, trained, tmp_path, capsys):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(trained.read_bytes()[:100])
    assert main(["predict", str(train_file), str(bad)]) == 1
    out, line = _error_line(capsys)
    assert "bad.npz" in line
    assert out == ""
    # a data file given as the model
    assert main(["predict", str(train_file), str(train_file)]) == 1
    _error_line(capsys)


def test_more_features_than_model(dataset, trained, tmp_path, capsys):
    X, y = dataset
    wide = tmp_path / "wide.svm"
    dump_svmlight_file(np.hstack([X, np.ones((len(X), 2))]), y, str(wide), zero_based=False)
    assert main(["predict", str(wide), str(trained), str(tmp_path / "o.txt")]) == 1
    _, line = _error_line(capsys)
    assert "7 features" in line and "5" in line
    assert not (tmp_path / "o.txt").exists()


def test_unwritable_output(train_file, trained, tmp_path, capsys):
    assert main(["predict", str(train_file), str(trained), str(tmp_path / "no" / "dir" / "o.txt")]) == 1
    _error_line(capsys)
    assert main(["train", "-q", str(train_file), str(tmp_path / "no" / "dir" / "m.npz")]) == 1
    _error_line(capsys)


def test_a_failed_write_of_predictions_leaves_the_file_as_it_was(train_file, trained,
                                                                  tmp_path):
    """Past a file size limit (a full disk alike): the error names the file, which keeps
    its old content instead of a cut-off part of the predictions, and no temporary file
    is left; a device is written directly, its error named too."""
    output = tmp_path / "predictions.txt"
    output.write_text("previous\n")

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    proc = subprocess.run([sys.executable, "-m", "fastsvm", "predict", "-q", str(train_file),
                           str(trained), str(output)], capture_output=True, text=True,
                          preexec_fn=limit_file_size)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (f"fastsvm: error: {output}: cannot save the predictions: "
                                   "File too large")
    assert output.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["predictions.txt", train_file.name, trained.name])
    if os.path.exists("/dev/full"):
        proc = subprocess.run([sys.executable, "-m", "fastsvm", "predict", "-q",
                               str(train_file), str(trained), "/dev/full"],
                              capture_output=True, text=True)
        assert proc.returncode == 1
        assert proc.stderr.strip() == ("fastsvm: error: /dev/full: cannot write the "
                                       "predictions: No space left on device")


def test_single_class_data(tmp_path, capsys):
    data = tmp_path / "one.svm"
    dump_svmlight_file(np.random.default_rng(0).normal(size=(20, 3)), np.ones(20), str(data),
                       zero_based=False)
    assert main(["train", "-q", str(data), str(tmp_path / "m.npz")]) == 1
    _error_line(capsys)


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def test_python_dash_m_entry_point(train_file, tmp_path):
    model = tmp_path / "sub.npz"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), env.get("PYTHONPATH", "")]
    )
    proc = subprocess.run(
        [sys.executable, "-m", "fastsvm", "train", "-B", "10", str(train_file), str(model)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Training accuracy" in proc.stdout
    assert model.exists()

    proc = subprocess.run(
        [sys.executable, "-m", "fastsvm", "train", "-q", "-B", "1", str(train_file), str(model)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("fastsvm: error: ")
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------
# Every solver, weights
# --------------------------------------------------------------------------


@pytest.mark.parametrize("solver, options, name", [
    *[(solver, [], name) for solver, name in [      # at the defaults
        ("budget", "BudgetSVC"), ("nystrom", "NystromSVC"), ("huber", "HuberSVC"),
        ("pegasos", "PegasosSVC"), ("margin-sgd", "MarginSGDSVC")]],
    ("budget", ["-B", "20", "-t", "2", "-s", "0"], "BudgetSVC"),
    ("nystrom", ["-n", "40", "-c", "4", "-s", "0"], "NystromSVC"),
    ("nystrom", ["-n", "40", "--nystrom-solver", "dcd", "--tol", "1e-4", "-s", "0"], "NystromSVC"),
    ("nystrom", ["-n", "40", "--multi-class", "ovr", "-s", "0"], "NystromSVC"),
    ("budget", ["-B", "20", "--multi-class", "ovr", "-s", "0"], "BudgetSVC"),
    ("huber", ["-c", "2", "--tol", "1e-4"], "HuberSVC"),
    ("huber", ["--huber-solver", "gd", "--tol", "1e-4"], "HuberSVC"),
    ("pegasos", ["-t", "rbf", "--max-iter", "200", "--batch-size", "20", "-s", "0"], "PegasosSVC"),
    ("pegasos", ["--no-average", "-s", "0"], "PegasosSVC"),
    ("pegasos", ["-t", "sigmoid", "-g", "0.05", "--no-margin-bounds", "--max-iter", "200",
                 "-s", "0"], "PegasosSVC"),
    ("huber", ["--no-margin-bounds"], "HuberSVC"),
    ("margin-sgd", ["-M", "1", "-g", "scale", "--sampling", "replacement", "-s", "0"],
     "MarginSGDSVC"),
])
def test_every_solver_trains_and_predicts(solver, options, name, dataset, train_file, tmp_path,
                                          capsys):
    X, y = dataset
    model = tmp_path / f"{solver}.npz"
    assert main(["train", "--solver", solver, *options, str(train_file), str(model)]) == 0
    out, _ = capsys.readouterr()
    assert f"Solver: {name}" in out and "Training accuracy" in out
    fitted = load_model(model)
    assert type(fitted).__name__ == name
    if name == "PegasosSVC":
        assert fitted.average == ("--no-average" not in options)
    if name == "HuberSVC":
        assert fitted.solver == ("gd" if "--huber-solver" in options else "lbfgs")
    if name in ("HuberSVC", "PegasosSVC"):
        assert fitted.margin_bounds == ("--no-margin-bounds" not in options)
    out_path = tmp_path / "pred.txt"
    assert main(["predict", "-q", str(train_file), str(model), str(out_path)]) == 0
    predicted = np.array(out_path.read_text().split(), dtype=int)
    np.testing.assert_array_equal(predicted, fitted.predict(X))
    assert np.mean(predicted == y) > 0.8


@pytest.mark.parametrize("inner", ["assg", "pegasos", "dcd"])
def test_nystrom_solver_option_sets_nystroms_solver(inner, train_file, tmp_path, capsys):
    """--nystrom-solver pegasos once replaced --solver nystrom: it trained a PegasosSVC."""
    model = tmp_path / "m.npz"
    assert main(["train", "-q", "--solver", "nystrom", "--nystrom-solver", inner, "-n", "30",
                 str(train_file), str(model)]) == 0
    fitted = load_model(model)
    assert type(fitted).__name__ == "NystromSVC" and fitted.solver == inner


def test_class_weights_from_the_command_line(dataset, train_file, tmp_path, capsys):
    X, y = dataset
    plain, weighted, balanced = (tmp_path / f"{k}.npz" for k in ("plain", "w", "b"))
    base = ["train", "-q", "--solver", "huber"]
    assert main([*base, str(train_file), str(plain)]) == 0
    assert main([*base, "-w1", "20", "-w-1", "0.5", str(train_file), str(weighted)]) == 0
    assert main([*base, "--class-weight", "balanced", str(train_file), str(balanced)]) == 0
    assert load_model(weighted).class_weight == {1: 20.0, -1: 0.5}
    assert load_model(balanced).class_weight == "balanced"
    # class 1 weighted up: the boundary moves towards class -1 (this data is separated too
    # well for any point to change sides)
    def mean_score(path):
        return load_model(path).decision_function(X)[y == -1].mean()
    assert mean_score(weighted) > mean_score(plain) + 0.05


@pytest.mark.parametrize("argv, match", [
    (["--solver", "nystrom", "-B", "10"], "-B/--budget does not apply to --solver nystrom"),
    (["--solver", "huber", "-s", "3"], "does not apply to --solver huber"),
    (["--solver", "huber", "--nystrom-solver", "dcd"],
     "--nystrom-solver does not apply to --solver huber (only to --solver nystrom)"),
    (["--solver", "nystrom", "--huber-solver", "gd"], "--huber-solver does not apply"),
    (["--solver", "huber", "-t", "rbf"], "does not support kernel='rbf'"),
    (["-w7", "2"], "7 is not a class"),
    (["-w1", "heavy"], "must be a number"),
    (["-w1", "2", "--class-weight", "balanced"], "not both"),
    (["-t", "poly"], "maintenance='merge' needs the Gaussian or the linear kernel"),
])
def test_bad_solver_options(argv, match, train_file, tmp_path, capsys):
    assert main(["train", "-q", *argv, str(train_file), str(tmp_path / "m.npz")]) == 1
    _, line = _error_line(capsys)
    assert match in line


def test_help_lists_the_solvers(capsys):
    assert main(["train", "--help"]) == 0
    out = capsys.readouterr().out
    for solver, name in [("budget", "BudgetSVC"), ("nystrom", "NystromSVC"), ("huber", "HuberSVC"),
                         ("pegasos", "PegasosSVC"), ("margin-sgd", "MarginSGDSVC")]:
        assert any(line.split()[:2] == [solver, name + ":"] for line in out.splitlines())
    assert main(["--help"]) == 0
    assert "margin-sgd" in capsys.readouterr().out


def test_option_choices_are_the_estimators():
    """The CLI writes out the string options' values (so that parsing imports no solver):
    they must be the estimators' own."""
    import fastsvm
    from fastsvm import cli
    from fastsvm.bounds.solver import HUBER_SOLVERS
    from fastsvm.bsgd.estimator import MAINTENANCE
    from fastsvm.margin_sgd.solver import UPDATES
    from fastsvm.merge import METHODS

    assert cli.MERGE_METHODS == tuple(sorted(METHODS))
    assert cli.MAINTENANCE == tuple(sorted(MAINTENANCE))
    assert cli.UPDATES == tuple(sorted(UPDATES))
    assert cli.HUBER_SOLVERS == tuple(sorted(HUBER_SOLVERS))
    [nystrom_solvers] = fastsvm.NystromSVC._parameter_constraints["solver"]
    assert cli.NYSTROM_SOLVERS == tuple(sorted(nystrom_solvers.options))
    assert {name for name, _ in cli.SOLVERS.values()} == set(fastsvm.__all__) - {"__version__"}


def test_predict_with_a_precomputed_kernel_model(dataset, tmp_path):
    """A model saved from a fit on a kernel matrix predicts from a file of kernel rows
    (the values against the training rows), which the CLI reads sparse."""
    from fastsvm import NystromSVC
    from fastsvm.persistence import save_model

    X, y = dataset
    K = X @ X.T
    clf = NystromSVC(kernel="precomputed", n_components=30, random_state=0).fit(K, y)
    save_model(clf, tmp_path / "pre.npz")
    dump_svmlight_file(K[:50], y[:50], str(tmp_path / "rows.txt"), zero_based=False)
    out_path = tmp_path / "pred.txt"
    assert main(["predict", "-q", str(tmp_path / "rows.txt"), str(tmp_path / "pre.npz"),
                 str(out_path)]) == 0
    np.testing.assert_array_equal(np.array(out_path.read_text().split(), dtype=int),
                                  clf.predict(K[:50]))


# --------------------------------------------------------------------------
# Output streams, output paths and odd labels
# --------------------------------------------------------------------------


class _GoneReader:
    """Standard output whose reader went away (``fastsvm train ... | head -1``)."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    flush = write

    def fileno(self):
        raise ValueError("no file descriptor")


@pytest.mark.parametrize("stdout", [_GoneReader(), None])
def test_train_saves_its_model_whatever_becomes_of_its_report(train_file, tmp_path,
                                                              monkeypatch, stdout):
    """A report nobody reads (a broken pipe, a closed stdout) is dropped; the model is
    saved, with status 0 (before, the broken pipe stopped the command before saving)."""
    monkeypatch.setattr(sys, "stdout", stdout)
    model = tmp_path / "m.npz"
    assert main(["train", "-B", "20", str(train_file), str(model)]) == 0
    assert load_model(model).n_features_in_ == 5


def test_closed_standard_error_and_output(train_file, trained, tmp_path, monkeypatch, capsys):
    """With standard error closed (sys.stderr None) the progress bars are not drawn (tqdm
    raised AttributeError); with standard output closed, predictions need a file."""
    monkeypatch.setattr(sys, "stderr", None)
    model = tmp_path / "m.npz"
    assert main(["train", "-B", "20", str(train_file), str(model)]) == 0
    assert "Model saved" in capsys.readouterr().out
    monkeypatch.undo()
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["predict", str(train_file), str(model)]) == 1
    assert "standard output is closed" in capsys.readouterr().err
    assert main(["predict", "-q", str(train_file), str(model), str(tmp_path / "o.txt")]) == 0
    assert len((tmp_path / "o.txt").read_text().splitlines()) == 300


@pytest.mark.skipif(not hasattr(os, "symlink") or not hasattr(os, "mkfifo"),
                    reason="needs symbolic links and FIFOs")
def test_model_paths_that_are_links_fifos_or_inputs(train_file, trained, tmp_path, capsys):
    """A link is written through and an existing file keeps its permissions; a FIFO (or
    device) and the input files are refused before any work."""
    real = tmp_path / "real.npz"
    real.write_bytes(b"old")
    os.chmod(real, 0o600)
    link = tmp_path / "link.npz"
    link.symlink_to(real)
    assert main(["train", "-q", "-B", "20", str(train_file), str(link)]) == 0
    assert link.is_symlink() and load_model(real).n_features_in_ == 5
    assert oct(real.stat().st_mode & 0o777) == oct(0o600)
    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)
    assert main(["train", "-q", str(train_file), str(fifo)]) == 1
    assert "not a regular file" in _error_line(capsys)[1]
    assert main(["train", "-q", str(train_file), str(train_file)]) == 1
    assert "is the input file" in _error_line(capsys)[1]
    data = train_file.read_bytes()
    assert main(["predict", "-q", str(train_file), str(trained), str(train_file)]) == 1
    assert "is the input file" in _error_line(capsys)[1]
    assert train_file.read_bytes() == data


def test_n_features_lets_a_model_predict_wider_files(dataset, train_file, tmp_path, capsys):
    """Features beyond the training file's are an error unless they hold only zeros;
    --n-features gives the model room for them (a model of a9a's first rows, which use
    121 of 123 features, could not predict a9a.t)."""
    X, y = dataset
    zeros, wide = tmp_path / "zeros.svm", tmp_path / "wide.svm"
    with open(zeros, "w") as fh:                  # explicit zeros in a 9th feature
        fh.writelines(f"{t} 1:{a} 9:0\n" for t, a in zip(y, X[:, 0]))
    dump_svmlight_file(np.hstack([X, np.ones((len(X), 2))]), y, str(wide), zero_based=False)
    model = tmp_path / "m.npz"
    assert main(["train", "-q", "-B", "20", str(train_file), str(model)]) == 0
    assert main(["predict", "-q", str(zeros), str(model), str(tmp_path / "o.txt")]) == 0
    assert main(["predict", "-q", str(wide), str(model), str(tmp_path / "o.txt")]) == 1
    assert "--n-features 7" in _error_line(capsys)[1]
    assert main(["train", "-q", "-B", "20", "--n-features", "7", str(train_file), str(model)]) == 0
    assert load_model(model).n_features_in_ == 7
    assert main(["predict", "-q", str(wide), str(model), str(tmp_path / "o.txt")]) == 0
    assert main(["train", "-q", "--n-features", "3", str(train_file), str(model)]) == 1
    assert "beyond n_features=3" in _error_line(capsys)[1]


def test_weights_of_integral_labels_beside_fractional_ones(dataset, tmp_path, capsys):
    """Labels 1 and 2.5 make text classes '1' and '2.5'; -w1 weighs class '1' (it raised
    "The classes, ['1', '2.5'], are not in class_weight")."""
    X, y = dataset
    data = tmp_path / "mixed.svm"
    dump_svmlight_file(X, np.where(y == 1, 1.0, 2.5), str(data), zero_based=False)
    plain, weighted = tmp_path / "plain.npz", tmp_path / "w.npz"
    assert main(["train", "-q", "--solver", "huber", str(data), str(plain)]) == 0
    assert main(["train", "-q", "--solver", "huber", "-w1", "20", str(data), str(weighted)]) == 0
    assert load_model(weighted).class_weight == {"1": 20.0}
    scores = [load_model(p).decision_function(X)[y == 1].mean() for p in (plain, weighted)]
    assert scores[1] < scores[0] - 0.05         # towards class '1' = classes_[0]


def test_labels_with_line_breaks_cannot_be_written_one_per_line(dataset, tmp_path, capsys):
    from fastsvm import HuberSVC
    from fastsvm.persistence import save_model

    X, y = dataset
    model = tmp_path / "m.npz"
    save_model(HuberSVC().fit(X, np.where(y == 1, "yes\nno", "no")), model)
    data = tmp_path / "d.svm"
    dump_svmlight_file(X, y, str(data), zero_based=False)
    assert main(["predict", str(data), str(model), str(tmp_path / "o.txt")]) == 1
    assert "line break" in _error_line(capsys)[1]


def test_integer_options_beyond_64_bits_are_clear_errors(train_file, tmp_path, capsys):
    for option in (["-B", str(10**20)], ["-e", str(10**20)],
                   ["--solver", "pegasos", "--max-iter", str(10**20)]):
        assert main(["train", "-q", *option, str(train_file), str(tmp_path / "m.npz")]) == 1
        assert "64-bit integer" in _error_line(capsys)[1]


@pytest.mark.parametrize("argv", [
    ["train", "{data}", "-q", "{model}"],
    ["train", "-q", "{data}", "--solver", "huber", "-c", "2", "{model}"],
])
def test_options_between_the_positional_arguments(argv, dataset, train_file, tmp_path, capsys):
    """``train data.txt -q model.npz`` had been a usage error (argparse gave the run of
    positionals before ``-q`` to data_file and none to the optional model_file)."""
    X, _ = dataset
    model = tmp_path / "m.npz"
    names = {"data": str(train_file), "model": str(model)}
    assert main([a.format(**names) for a in argv]) == 0
    assert capsys.readouterr() == ("", "")
    out = tmp_path / "out.txt"
    assert main(["predict", str(train_file), "-q", str(model), str(out)]) == 0
    np.testing.assert_array_equal(np.array(out.read_text().split(), dtype=int),
                                  load_model(model).predict(X))


@pytest.mark.parametrize("number, kernel", [("0", "linear"), ("1", "poly"), ("2", "rbf"),
                                            ("3", "sigmoid")])
def test_libsvm_kernel_numbers(number, kernel, train_file, tmp_path, capsys):
    model = tmp_path / "m.npz"
    assert main(["train", "-q", "--solver", "nystrom", "-n", "20", "-g", "0.1", "-t", number,
                 str(train_file), str(model)]) == 0
    assert load_model(model).kernel == kernel


def test_a_zero_based_training_file_makes_zero_based_predictions(dataset, tmp_path, capsys):
    """The model remembers --zero-based, so predicting on files like the training file
    needs no flag; --one-based overrides it (and then index 0 is an error)."""
    X, y = dataset
    data = tmp_path / "zero.svm"
    dump_svmlight_file(X, y, str(data), zero_based=True)
    model, out = tmp_path / "m.npz", tmp_path / "out.txt"
    assert main(["train", "-q", "--solver", "huber", "--zero-based", str(data), str(model)]) == 0
    assert load_model(model).n_features_in_ == X.shape[1]
    assert main(["predict", "-q", str(data), str(model), str(out)]) == 0
    np.testing.assert_array_equal(np.array(out.read_text().split(), dtype=int),
                                  load_model(model).predict(X))
    assert main(["predict", "-q", "--one-based", str(data), str(model), str(out)]) == 1
    assert "index 0" in _error_line(capsys)[1]


def test_training_accuracy_is_that_of_the_saved_model(dataset, train_file, tmp_path, capsys):
    X, y = dataset
    model = tmp_path / "m.npz"
    assert main(["train", "--solver", "huber", str(train_file), str(model)]) == 0
    out, _ = capsys.readouterr()
    correct = int(np.sum(load_model(model).predict(X) == y))
    assert f"Training accuracy: {100 * correct / 300:.4f}% ({correct}/300)" in out
