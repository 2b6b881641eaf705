"""DaskHuberSVC, DaskBudgetSVC and DaskNystromSVC on 10 million rows generated on the
workers: time per pass and peak memory with 1 and 2 workers, accuracy next to the local
estimators.

Data: a HIGGS-like set of ``--rows`` rows (default 10,000,000) and 28 dense
standard-normal float64 features, generated on the workers by
``dask.array.random.RandomState(0)`` in chunks of ``--chunk-rows`` rows
(default 500,000: 20 partitions), with the label computed lazily from the
same chunks, y = 1 when

    X[:, :10] @ w + X[:, 10] X[:, 11] + sin(2 X[:, 12]) + 0.5 e > 0

(else 0), w a fixed unit vector (``np.random.RandomState(2024)``), e a
standard-normal noise drawn by the same RandomState, the other 15 features
pure noise: about 50 % positive, a linear model reaches about 73 % test
accuracy and an RBF model about 83 %.  X (2.2 GB at 10 million rows) and y
are persisted on the workers (``client.persist``, waited for) before any
fit: the data never exist on the client.  The test set, ``--n-test`` rows
(default 100,000), is generated the same way from seed 1 and brought to
the client (22 MB).

Clusters: ``distributed.LocalCluster(n_workers=k, threads_per_worker=1,
processes=True, dashboard_address=None)`` for k in ``--workers`` (default 1
and 2), one after the other, each generating the same data (the chunks
and their seeds do not depend on k).  Before the timed fits every worker
runs a tiny local HuberSVC and BudgetSVC fit (numba's kernels loaded), and
the cluster a tiny DaskHuberSVC and DaskBudgetSVC fit on the first 2,000
rows.  Then, on all rows:

* ``DaskHuberSVC(solver='gd', eta0=1.0, tol=0, max_iter=30)`` (``--huber-iters``): tol = 0
  runs all 30 gradient-descent iterations; one pass is one iteration, a
  loss and gradient evaluation over all rows (each partition with the
  margin bounds of its own rows).  Time per pass: the mean duration of the
  client's evaluation calls (the evaluator of ``fastsvm.dask.huber`` is
  wrapped to time them), so partition set-up (validation, packing) is
  apart: "setup" is the time from ``fit`` to the first pass, "after" from
  the last pass to the end (the final evaluation of the returned model
  included).  The first pass also sorts each partition's rows by margin
  (Algorithm 1: a sorted copy of the partition and its prefix sums), and
  so do later re-sorts: the median pass and the first pass are reported
  beside the mean, every pass's duration in the JSON.  Also
  ``training_info_['examined_fraction']``, the share of margins computed
  per iteration.  30 iterations do not converge (a ConvergenceWarning,
  recorded).
* ``DaskBudgetSVC(budget=500, epochs=1, random_state=0)`` (``--budget``,
  ``--budget-epochs``) at its defaults otherwise (RBF, gamma = 'scale',
  lookup-wd merging): one pass is one epoch, the model travelling through
  the partitions in pieces of 1,000 rows (one task each, 10,000 tasks in
  one chain at 10 million rows); time per pass: the duration of
  ``DaskBudgetSVC._travel`` (wrapped) over the epochs.  "after" is mostly
  the exact hinge offset (the decision values of every row).  A binary
  problem is one chain, so a second worker is not expected to shorten it.
* ``DaskNystromSVC(n_components=100, random_state=0)`` (``--nystrom-components``)
  at its defaults otherwise (RBF, gamma = 'scale', tol = 1e-3 on the
  duality gap): "setup" is drawing the landmarks and factoring K_mm, then
  every partition is embedded on its worker (reported apart, "embedding":
  the part two workers share), then the dual coordinate descent runs
  (:mod:`fastsvm.dask.nystrom`); one pass is one of its passes, time per
  pass = solver time / passes, from ``training_info_``.  The embedding
  takes rows x r x 4 bytes (4 GB at 10 million rows and r = 100) on the
  workers.

Peak memory, sampled every 50 ms during each fit by a thread of the client
reading ``/proc/PID/status`` (the cluster is local, so the worker
processes are on this machine; their ids from ``client.run(os.getpid)``):
the client (this process, which also runs the scheduler) and each worker
process.  Peak RSS = max(sampled VmRSS, VmHWM after the fit), VmHWM reset
(``/proc/self/clear_refs``) just before the fit in every process; reported
as the absolute peak and its increase over the RSS before the fit (a
worker's baseline holds its share of the persisted data).  MB = 2^20
bytes.  The data size, rows x 28 x 8 bytes, is reported beside.  After
each fit the released partitions are given a second to be dropped.

Speed-up = time per pass with 1 worker / with 2 workers.  The partitions,
the order of summation and the travelling order do not depend on the
number of workers, so both give the same model up to rounding (a chunk
copied between workers may be summed with another alignment, so in another
order): reported as "identical" (a hash of the coefficients) or as the
largest difference of the test decision values relative to the largest
one.  Test accuracy of every fit on the test set.

Accuracy next to the local estimator on ``--local-rows`` rows (default
1,000,000, the first rows of the same persisted arrays, brought to the
client as NumPy arrays for the local fits), on the cluster with the most
workers: ``HuberSVC(solver='gd', eta0=1.0, tol=1e-4)`` (converged) and
``BudgetSVC(budget=500, epochs=1, random_state=0)`` in the client process
against the Dask estimator with the same parameters on the same rows;
fit times (perf_counter around ``fit``), passes and test accuracy.

Run ``python benchmarks/dask_scaling.py`` (9.0 minutes on two cores in the
run of 2026-11-24: per cluster about 2.3 minutes for DaskBudgetSVC, whose
epoch costs about 11 ms per 1,000-row piece, 10,000 pieces in one chain,
plus 20-34 s for its offset; about 1 minute for DaskNystromSVC and 20-30 s
for DaskHuberSVC; 40 s for the comparison on 1 million rows).  It
needs about 9 GB of free memory: with one worker, DaskHuberSVC's
partitions hold the data, a sorted copy and its prefix sums, about 3.8
times the 2.2 GB of data); ``--smoke`` for a check in seconds
(20,000 rows in chunks of 5,000, 5 iterations, budget 50, 20 landmarks,
10,000 local rows, 5,000 test rows).  Output:
``benchmarks/results/dask_scaling.{json,md,png}``.
"""

import contextlib
import gc
import hashlib
import logging
import os
import sys
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

NAME = "dask_scaling"
ROWS, SMOKE_ROWS = 10_000_000, 20_000
CHUNK_ROWS, SMOKE_CHUNK_ROWS = 500_000, 5_000
LOCAL_ROWS, SMOKE_LOCAL_ROWS = 1_000_000, 10_000
N_TEST, SMOKE_N_TEST = 100_000, 5_000
HUBER_ITERS, SMOKE_HUBER_ITERS = 30, 5
BUDGET, SMOKE_BUDGET = 500, 50
COMPONENTS, SMOKE_COMPONENTS = 100, 20
WORKERS = [1, 2]
N_FEATURES = 28
TRAIN_SEED, TEST_SEED, WEIGHT_SEED = 0, 1, 2024
NOISE = 0.5
WARM_ROWS = 2000
SAMPLE_S = 0.05                  # sampling interval of /proc/PID/status during a fit
SETTLE_S = 1.0                   # pause after a fit for its partitions to be dropped
LOCAL_HUBER_TOL = 1e-4
ESTIMATORS = ("DaskHuberSVC", "DaskBudgetSVC", "DaskNystromSVC")
LOCAL_OF = {"DaskHuberSVC": "HuberSVC", "DaskBudgetSVC": "BudgetSVC",
            "DaskNystromSVC": "NystromSVC"}
MB = 2.0**20


def parse_args(argv):
    p = H.parser(__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=None,
                   help=f"training rows (default {ROWS:,}; smoke {SMOKE_ROWS:,})")
    p.add_argument("--chunk-rows", type=int, default=None,
                   help=f"rows per chunk (partition) (default {CHUNK_ROWS:,}; smoke "
                        f"{SMOKE_CHUNK_ROWS:,})")
    p.add_argument("--local-rows", type=int, default=None,
                   help=f"rows of the comparison with the local estimators (default "
                        f"{LOCAL_ROWS:,}; smoke {SMOKE_LOCAL_ROWS:,}; 0 skips it)")
    p.add_argument("--n-test", type=int, default=None,
                   help=f"test rows (default {N_TEST:,}; smoke {SMOKE_N_TEST:,})")
    p.add_argument("--workers", nargs="+", type=int, default=list(WORKERS),
                   help="worker processes of each cluster (default: 1 2)")
    p.add_argument("--huber-iters", type=int, default=None,
                   help=f"DaskHuberSVC max_iter of the timed fits (default {HUBER_ITERS}; "
                        f"smoke {SMOKE_HUBER_ITERS})")
    p.add_argument("--budget", type=int, default=None,
                   help=f"DaskBudgetSVC budget (default {BUDGET}; smoke {SMOKE_BUDGET})")
    p.add_argument("--budget-epochs", type=int, default=1,
                   help="DaskBudgetSVC epochs (default 1)")
    p.add_argument("--nystrom-components", type=int, default=None,
                   help=f"DaskNystromSVC n_components (default {COMPONENTS}; smoke "
                        f"{SMOKE_COMPONENTS})")
    p.add_argument("--estimators", nargs="+", choices=ESTIMATORS, default=list(ESTIMATORS),
                   help="what to fit (default: all three)")
    p.add_argument("--sets", nargs="*", default=None,
                   help="ignored: the data are generated (accepted so that run_all.py can pass "
                        "it on to every script)")
    args = p.parse_args(argv)
    defaults = {"rows": (ROWS, SMOKE_ROWS), "chunk_rows": (CHUNK_ROWS, SMOKE_CHUNK_ROWS),
                "local_rows": (LOCAL_ROWS, SMOKE_LOCAL_ROWS), "n_test": (N_TEST, SMOKE_N_TEST),
                "huber_iters": (HUBER_ITERS, SMOKE_HUBER_ITERS),
                "budget": (BUDGET, SMOKE_BUDGET),
                "nystrom_components": (COMPONENTS, SMOKE_COMPONENTS)}
    for key, (full, smoke) in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, smoke if args.smoke else full)
    args.local_rows = min(args.local_rows, args.rows)
    args.workers = sorted(set(args.workers))
    return args


# ------------------------------------------------------------ /proc memory
def sample_rss(pids):
    """A :class:`_harness.PeakSampler` of the VmRSS of each process (``"self"`` or a pid)."""
    baseline = {pid: H.proc_status(pid).get("VmRSS", 0.0) for pid in pids}
    sampler = H.PeakSampler(lambda: {pid: H.proc_status(pid).get("VmRSS", 0.0) for pid in pids},
                            SAMPLE_S, baseline)
    sampler.baseline = baseline
    return sampler


def peaks(sampler, reset):
    """{pid: (baseline, peak)} in MB, the peak including VmHWM where ``reset[pid]``."""
    out = {}
    for pid, base in sampler.baseline.items():
        peak = sampler.peak[pid]
        if reset.get(pid):
            peak = max(peak, H.proc_status(pid).get("VmHWM", 0.0))
        out[pid] = (base, peak)
    return out


# -------------------------------------------------------------------- data
def weights():
    w = np.random.RandomState(WEIGHT_SEED).normal(size=10)
    return w / np.linalg.norm(w)


def make_data(rows, chunk_rows, seed):
    """Lazy (X, y) of the generator (see the module docstring), chunks of ``chunk_rows``."""
    import dask.array as da

    rs = da.random.RandomState(seed)
    X = rs.normal(size=(rows, N_FEATURES), chunks=(chunk_rows, N_FEATURES))
    noise = rs.normal(scale=NOISE, size=rows, chunks=chunk_rows)
    score = X[:, :10] @ weights() + X[:, 10] * X[:, 11] + da.sin(2.0 * X[:, 12]) + noise
    return X, (score > 0).astype(np.int64)


def model_hash(clf):
    digest = hashlib.sha256()
    parts = ((clf.coef_, clf.intercept_) if hasattr(clf, "coef_")
             else (clf.support_vectors_, clf.dual_coef_, clf.intercept_))
    for part in parts:
        digest.update(np.ascontiguousarray(part).tobytes())
    return digest.hexdigest()


# ------------------------------------------------------------- estimators
def make_estimator(name, args, client=None, timed=True):
    """The estimator ``name`` ('DaskHuberSVC', 'HuberSVC', ...): the timed configuration
    (``timed``) or the one of the comparison with the local estimator."""
    import fastsvm
    import fastsvm.dask

    cls = getattr(fastsvm.dask, name, None) or getattr(fastsvm, name)
    extra = {"client": client} if name.startswith("Dask") else {}
    if name.endswith("HuberSVC"):
        params = (dict(solver="gd", eta0=1.0, tol=0.0, max_iter=args.huber_iters) if timed
                  else dict(solver="gd", eta0=1.0, tol=LOCAL_HUBER_TOL))
    elif name.endswith("NystromSVC"):
        params = dict(n_components=args.nystrom_components, random_state=0)
    else:
        params = dict(budget=args.budget, epochs=args.budget_epochs, random_state=0)
    return cls(**params, **extra)


@contextlib.contextmanager
def pass_timer():
    """Record (start, end) of each pass: every evaluation of DaskHuberSVC's descent, every
    ``DaskBudgetSVC._travel`` (all epochs)."""
    from fastsvm.dask import budget, huber

    spans = []

    class TimedEvaluator(huber._DaskEvaluator):
        def evaluate(self, it, w, b, grad):
            started = time.perf_counter()
            try:
                return super().evaluate(it, w, b, grad)
            finally:
                spans.append((started, time.perf_counter()))

    travel = budget.DaskBudgetSVC._travel

    def timed_travel(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return travel(self, *args, **kwargs)
        finally:
            spans.append((started, time.perf_counter()))

    with mock.patch.object(huber, "_DaskEvaluator", TimedEvaluator), \
            mock.patch.object(budget.DaskBudgetSVC, "_travel", timed_travel):
        yield spans


def _warm_up_worker():
    """Tiny local fits in a worker process: numba's kernels loaded before the timings."""
    from fastsvm import BudgetSVC, HuberSVC, NystromSVC

    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, N_FEATURES))
    y = (X[:, 0] > 0).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        HuberSVC(max_iter=5).fit(X, y).predict(X)
        BudgetSVC(budget=20, epochs=1, random_state=0).fit(X, y).predict(X)
        NystromSVC(n_components=10, random_state=0).fit(X, y).predict(X)
    return True


def warm_up(client, X, y, args):
    """Numba's kernels loaded in every worker (and the client), the Dask code paths run."""
    client.run(_warm_up_worker)
    _warm_up_worker()
    m = min(WARM_ROWS, X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.estimators:
            clf = make_estimator(name, args, client)
            clf.set_params(**{"DaskHuberSVC": {"max_iter": 3}, "DaskBudgetSVC": {"budget": 20},
                              "DaskNystromSVC": {"n_components": 10}}[name])
            clf.fit(X[:m], y[:m]).predict(X[:100].compute())


def settle(client):
    """Let the scheduler drop a finished fit's partitions, then collect garbage everywhere."""
    gc.collect()
    time.sleep(SETTLE_S)
    client.run(gc.collect)


# -------------------------------------------------------------- measurements
def measure(name, client, worker_pids, X, y, X_test, y_test, args, k):
    """One timed, memory-sampled fit of the Dask estimator ``name`` on all rows."""
    clf = make_estimator(name, args, client)
    settle(client)
    reset = {"self": H.reset_peak_rss()}
    reset.update({pid: ok for pid, ok in zip(worker_pids,
                                             client.run(H.reset_peak_rss).values())})
    with warnings.catch_warnings(record=True) as caught, pass_timer() as spans:
        warnings.simplefilter("always")
        with sample_rss(["self", *worker_pids]) as sampler:
            started = time.perf_counter()
            clf.fit(X, y)
            fit_s = time.perf_counter() - started
    ended = started + fit_s
    peaks_mb = peaks(sampler, reset)
    info = clf.training_info_
    passes = len(spans) if name == "DaskHuberSVC" else args.budget_epochs
    if name == "DaskNystromSVC":       # one span: the solver; setup and embedding before it
        passes = int(np.max(clf.n_iter_))
        solver_start = started + info["time_landmarks_s"] + info["time_embedding_s"]
        spans = [(solver_start, solver_start + info["time_solver_s"])]
    durations = [b - a for a, b in spans]
    decision = clf.decision_function(X_test)
    accuracy = float(np.mean(clf.predict(X_test) == y_test))
    client_base, client_peak = peaks_mb["self"]
    result = {
        "estimator": name, "workers": k, "rows": X.shape[0], "partitions": X.numblocks[0],
        "fit_s": fit_s, "passes": passes, "pass_s": sum(durations) / passes,
        "pass_median_s": float(np.median(durations)) if name == "DaskHuberSVC" else None,
        "first_pass_s": durations[0] if name == "DaskHuberSVC" else None,
        "pass_durations_s": durations,
        "setup_s": (info["time_landmarks_s"] if name == "DaskNystromSVC"
                    else spans[0][0] - started),
        "embedding_s": info["time_embedding_s"] if name == "DaskNystromSVC" else None,
        "after_s": ended - spans[-1][1],
        "accuracy": accuracy, "model_sha256": model_hash(clf),
        "client_baseline_mb": client_base, "client_peak_mb": client_peak,
        "client_increase_mb": client_peak - client_base,
        "worker_baseline_mb": [peaks_mb[p][0] for p in worker_pids],
        "worker_peak_mb": [peaks_mb[p][1] for p in worker_pids],
        "worker_increase_mb": [peaks_mb[p][1] - peaks_mb[p][0] for p in worker_pids],
        "vmhwm_reset": all(reset.values()), "samples": sampler.samples,
        "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught}),
    }
    if name == "DaskHuberSVC":
        result.update(n_iter=int(np.max(clf.n_iter_)),
                      examined_fraction=float(np.mean(info["examined_fraction"])),
                      n_sorts=int(np.sum(info["n_sorts"])),
                      objective=float(info["objective"][0][-1]))
    elif name == "DaskBudgetSVC":
        result.update(n_support=int(np.sum(clf.n_support_)), steps=int(info["steps"]),
                      merges=int(info["merges"]))
    else:
        result.update(n_components=int(clf.n_components_),
                      duality_gap=float(info["duality_gap"][0][-1]),
                      objective=float(info["objective"][0][-1]),
                      kernel_residual=info["kernel_residual"])
    del clf
    return result, decision


def compare_local(client, X, y, X_test, y_test, args, k):
    """Local and Dask estimator on the first ``--local-rows`` rows: fit time, accuracy."""
    m = args.local_rows
    X_m, y_m = X[:m], y[:m]
    X_local, y_local = client.compute([X_m, y_m], sync=True)
    out = []
    for name in args.estimators:
        row = {"estimator": name, "local_estimator": LOCAL_OF[name], "rows": m, "workers": k,
               "partitions": X_m.numblocks[0]}
        for where, clf, data in (
                ("local", make_estimator(LOCAL_OF[name], args, timed=False), (X_local, y_local)),
                ("dask", make_estimator(name, args, client, timed=False), (X_m, y_m))):
            settle(client)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                started = time.perf_counter()
                clf.fit(*data)
                fit_s = time.perf_counter() - started
            row[where] = {
                "fit_s": fit_s, "accuracy": float(np.mean(clf.predict(X_test) == y_test)),
                "passes": (args.budget_epochs if name == "DaskBudgetSVC"
                           else int(np.max(clf.n_iter_))),
                "params": {p: v for p, v in clf.get_params().items() if p != "client"},
                "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught})}
            H.log(f"  {m:,} rows, {LOCAL_OF[name] if where == 'local' else name} ({where}): "
                  f"fit {fit_s:.1f} s, accuracy {row[where]['accuracy']:.4f}")
        out.append(row)
    del X_local, y_local
    return out


def run_cluster(k, args, test):
    """Everything measured on a cluster of ``k`` workers: (cluster facts, runs, local rows,
    the test set, {estimator: test decision values})."""
    import distributed

    with distributed.LocalCluster(n_workers=k, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster) as client:
        worker_pids = list(client.run(os.getpid).values())
        started = time.perf_counter()
        X, y = make_data(args.rows, args.chunk_rows, TRAIN_SEED)
        X, y = client.persist([X, y])
        distributed.wait([X, y])
        generate_s = time.perf_counter() - started
        holders = client.who_has(X)
        addresses = list(client.scheduler_info()["workers"])
        chunks = [sum(address in where for where in holders.values()) for address in addresses]
        if test is None:
            X_test, y_test = make_data(args.n_test, min(args.chunk_rows, args.n_test),
                                       TEST_SEED)
            test = tuple(client.compute([X_test, y_test], sync=True))
        H.log(f"{_workers(k)}: {args.rows:,} rows generated and persisted in {generate_s:.1f} s "
              f"(chunks held per worker {chunks})")
        warm_up(client, X, y, args)
        facts = {"workers": k, "worker_pids": worker_pids, "generate_s": generate_s,
                 "chunks_per_worker": chunks,
                 "worker_memory_limit_mb": [w["memory_limit"] / MB for w in
                                            client.scheduler_info()["workers"].values()]}
        runs, decisions = [], {}
        for name in args.estimators:
            r, decisions[name] = measure(name, client, worker_pids, X, y, *test, args, k)
            runs.append(r)
            H.log(f"  {name}: {r['pass_s']:.3f} s per pass ({r['passes']} passes; fit "
                  f"{r['fit_s']:.1f} s), client +{r['client_increase_mb']:,.0f} MB, workers "
                  f"peak {', '.join(f'{v:,.0f}' for v in r['worker_peak_mb'])} MB, accuracy "
                  f"{r['accuracy']:.4f}")
        local = []
        if args.local_rows > 0 and k == max(args.workers):
            local = compare_local(client, X, y, *test, args, k)
        del X, y
    return facts, runs, local, test, decisions


def agreement(results, decisions, args):
    """Each worker count's model against the first one's: identical coefficients (hash) and
    the largest difference of the test decision values relative to the largest value."""
    first = args.workers[0]
    out = []
    for name in args.estimators:
        for k in args.workers[1:]:
            a, b = decisions[first][name], decisions[k][name]
            out.append({"estimator": name, "workers": [first, k],
                        "identical": _run(results, name, first)["model_sha256"]
                        == _run(results, name, k)["model_sha256"],
                        "decision_difference": float(np.abs(a - b).max()
                                                     / max(np.abs(a).max(), 1e-300))})
    return out


# -------------------------------------------------------------------- main
def main(argv=None):
    args = parse_args(argv)
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise SystemExit("dask_scaling.py needs dask and distributed: pip install "
                         "'fastsvm[dask]'")
    out = H.output_dir(args)
    machine = H.machine_info()
    started = time.perf_counter()
    settings = {
        "smoke": args.smoke, "rows": args.rows, "chunk_rows": args.chunk_rows,
        "n_features": N_FEATURES, "n_test": args.n_test, "local_rows": args.local_rows,
        "workers": args.workers, "estimators": args.estimators,
        "data_mb": args.rows * N_FEATURES * 8 / MB,
        "timed_params": {name: {p: v for p, v in make_estimator(name, args).get_params().items()
                                if p != "client"} for name in args.estimators},
        "data": {"generator": "dask.array.random.RandomState", "seed": TRAIN_SEED,
                 "test_seed": TEST_SEED, "weight_seed": WEIGHT_SEED, "noise": NOISE,
                 "label": "X[:, :10] @ w + X[:, 10] * X[:, 11] + sin(2 X[:, 12]) + noise > 0",
                 "w": weights(), "dtype": "float64"},
        "cluster": "distributed.LocalCluster(n_workers=k, threads_per_worker=1, "
                   "processes=True, dashboard_address=None)",
        "sample_interval_s": SAMPLE_S, "dask": dask.__version__,
        "distributed": distributed.__version__,
    }
    results = {"clusters": [], "runs": [], "local": [], "agreement": []}
    test, decisions = None, {}
    for k in args.workers:
        facts, runs, local, test, decisions[k] = run_cluster(k, args, test)
        results["clusters"].append(facts)
        results["runs"] += runs
        results["local"] += local
    results["agreement"] = agreement(results, decisions, args)
    results["positive_fraction_test"] = float(np.mean(test[1]))
    return H.write_outputs(out, NAME, settings, results, started, machine, render_markdown, plot)


# ------------------------------------------------------------------ output
def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def _workers(k):
    return f"{k} worker{'s' if k > 1 else ''}"


def _run(results, name, k):
    return next((r for r in results["runs"] if r["estimator"] == name and r["workers"] == k),
                None)


def render_markdown(payload):
    s, results = payload["settings"], payload["results"]
    lines = H.header_lines("fastsvm.dask: time per pass and peak memory with 1 and 2 workers",
                           payload)
    if s["smoke"]:
        lines += [f"**Smoke run** ({s['rows']:,} rows): the numbers are dominated by fixed "
                  "costs and meaningless.", ""]
    huber = s["timed_params"].get("DaskHuberSVC")
    budget = s["timed_params"].get("DaskBudgetSVC")
    nystrom = s["timed_params"].get("DaskNystromSVC")
    lines += [
        f"Data: {s['rows']:,} rows x {s['n_features']} standard-normal float64 features "
        f"({s['data_mb']:,.0f} MB), generated on the workers by "
        f"`dask.array.random.RandomState({s['data']['seed']})` in chunks of "
        f"{s['chunk_rows']:,} rows and persisted there; y = [{s['data']['label']}] with w a "
        f"fixed unit vector and noise ~ N(0, {s['data']['noise']:g}^2). Test set: "
        f"{s['n_test']:,} rows from seed {s['data']['test_seed']} "
        f"({100 * results['positive_fraction_test']:.1f} % positive). Clusters: "
        f"`{s['cluster']}`, one after the other.",
        "",
    ]
    if huber:
        lines += [f"DaskHuberSVC(eta0={huber['eta0']:g}, tol={huber['tol']:g}, "
                  f"max_iter={huber['max_iter']}): one pass = one gradient-descent iteration "
                  "(loss and gradient over all rows); time per pass = mean duration of the "
                  "client's evaluation calls; the first also builds each partition's sorted "
                  "margin lists. **examined**: share of margins computed per iteration "
                  "(margin bounds)."]
    if budget:
        lines += [f"DaskBudgetSVC(budget={budget['budget']}, epochs={budget['epochs']}, "
                  f"random_state={budget['random_state']}), RBF, gamma = 'scale': one pass = "
                  "one epoch, the model travelling through the partitions in pieces of 1,000 "
                  "rows (one chain of tasks: a second worker cannot run any of it at the same "
                  "time)."]
    if nystrom:
        lines += [f"DaskNystromSVC(n_components={nystrom['n_components']}, "
                  f"random_state={nystrom['random_state']}), RBF, gamma = 'scale', "
                  f"tol = {nystrom['tol']:g}: one pass = one pass of its dual coordinate "
                  "descent (over all rows, travelling through the partitions in pieces, or "
                  "over the rows shrinking kept active); time per pass = solver time / passes. "
                  "**embedding**: every partition embedded on its worker (in parallel); "
                  "**setup**: for it, the landmarks drawn and K_mm factored."]
    lines += ["**setup**: from `fit` to the first pass (partitions validated and packed on "
              "the workers); **after**: from the last pass to the end of `fit` (Huber: the "
              "evaluation of the returned model; Budget: mostly the exact offset over all "
              "rows).", ""]
    table = []
    for r in results["runs"]:
        table.append([r["estimator"], r["workers"], f"{r['rows']:,}", r["partitions"],
                      r["passes"], f"{r['pass_s']:.3f}", _fmt(r.get("pass_median_s"), ".3f"),
                      _fmt(r.get("first_pass_s"), ".3f"),
                      f"{r['fit_s']:.1f}", f"{r['setup_s']:.1f}",
                      _fmt(r.get("embedding_s"), ".1f"), f"{r['after_s']:.1f}",
                      _fmt(r.get("examined_fraction"), ".3f"), f"{100 * r['accuracy']:.2f}"])
    lines += ["## Time per pass", "", H.markdown_table(
        ["estimator", "workers", "rows", "partitions", "passes", "time per pass (s)",
         "median pass (s)", "first pass (s)", "fit (s)", "setup (s)", "embedding (s)",
         "after (s)", "examined",
         "test accuracy (%)"], table)]
    workers = s["workers"]
    if len(workers) > 1:
        lo, hi = workers[0], workers[-1]
        speed = []
        for name in s["estimators"]:
            a, b = _run(results, name, lo), _run(results, name, hi)
            same = next(g for g in results["agreement"]
                        if g["estimator"] == name and g["workers"] == [lo, hi])
            speed.append([name, f"{a['pass_s']:.3f}", f"{b['pass_s']:.3f}",
                          f"{a['pass_s'] / b['pass_s']:.2f}", f"{a['fit_s'] / b['fit_s']:.2f}",
                          "identical" if same["identical"]
                          else f"{same['decision_difference']:.1e}"])
        lines += ["", f"## Speed-up from {_workers(lo)} to {_workers(hi)}", "",
                  f"Speed-up = time with {_workers(lo)} / time with {_workers(hi)}. **same "
                  "model**: 'identical' where the coefficients are bit for bit the same, else the "
                  "largest difference of the test decision values relative to the largest "
                  "value (rounding: a partition built from a copy of a chunk that travelled "
                  "between workers may sum in another order).", "",
                  H.markdown_table(["estimator", f"{_workers(lo)}: s per pass",
                                    f"{_workers(hi)}: s per pass", "speed-up per pass",
                                    "speed-up of the fit", "same model"], speed)]
    mem = []
    for r in results["runs"]:
        mem.append([r["estimator"], r["workers"], f"{s['data_mb']:,.0f}",
                    f"{r['client_peak_mb']:,.0f}", f"{r['client_increase_mb']:,.1f}",
                    " / ".join(f"{v:,.0f}" for v in r["worker_baseline_mb"]),
                    " / ".join(f"{v:,.0f}" for v in r["worker_peak_mb"]),
                    " / ".join(f"{v:,.0f}" for v in r["worker_increase_mb"])])
    lines += ["", "## Peak memory", "",
              f"RSS sampled every {1000 * s['sample_interval_s']:g} ms from `/proc/PID/status` "
              "during the fit, and VmHWM after it (reset before it): peak = the larger. "
              "**client**: this process (it also runs the scheduler); **workers**: each worker "
              "process, ' / '-separated; **before**: RSS before the fit (the worker's share of "
              "the persisted data included). MB = 2^20 bytes.", "",
              H.markdown_table(["estimator", "workers", "data (MB)", "client peak RSS (MB)",
                                "client + (MB)", "workers before (MB)",
                                "workers peak RSS (MB)", "workers + (MB)"], mem)]
    if results["local"]:
        comp = []
        for r in results["local"]:
            loc, dist = r["local"], r["dask"]
            comp.append([r["local_estimator"], r["estimator"], f"{r['rows']:,}", r["workers"],
                         f"{loc['fit_s']:.1f}", f"{dist['fit_s']:.1f}", loc["passes"],
                         dist["passes"], f"{100 * loc['accuracy']:.2f}",
                         f"{100 * dist['accuracy']:.2f}",
                         f"{100 * (dist['accuracy'] - loc['accuracy']):+.2f}"])
        first = results["local"][0]
        lines += ["", "## Accuracy next to the local estimator", "",
                  f"The first {first['rows']:,} rows of the same persisted data, brought to "
                  f"the client as NumPy arrays for the local fit (in the client process); the "
                  f"Dask fit on the same rows ({first['partitions']} partitions, "
                  f"{first['workers']} workers). HuberSVC(eta0=1, tol={LOCAL_HUBER_TOL:g}), "
                  "BudgetSVC(budget, epochs, random_state=0) and NystromSVC(n_components, "
                  "random_state=0) as above, both sides alike; "
                  "accuracy on the test set.", "",
                  H.markdown_table(["local", "dask", "rows", "workers", "local fit (s)",
                                    "dask fit (s)", "local passes", "dask passes",
                                    "local accuracy (%)", "dask accuracy (%)",
                                    "dask - local (points)"], comp)]
    notes = [f"- {_workers(c['workers'])}: data generated and persisted in "
             f"{c['generate_s']:.1f} s, chunks held per worker {c['chunks_per_worker']} (a "
             "chunk copied to a second worker counts on both), worker "
             f"memory limit {', '.join(f'{v:,.0f}' for v in c['worker_memory_limit_mb'])} MB"
             for c in results["clusters"]]
    for r in results["runs"]:
        notes += [f"- {r['estimator']}, {_workers(r['workers'])}: {w}" for w in r["warnings"]]
    for r in results["local"]:
        for where in ("local", "dask"):
            notes += [f"- {r['local_estimator'] if where == 'local' else r['estimator']} on "
                      f"{r['rows']:,} rows: {w}" for w in r[where]["warnings"]]
    lines += ["", "Notes and warnings:", ""] + notes
    return "\n".join(lines)


def plot(payload, path):
    plt = H.setup_matplotlib()
    if plt is None:
        return
    s, results = payload["settings"], payload["results"]
    names = s["estimators"]
    workers = s["workers"]
    fig, axes = plt.subplots(1, len(names) + 1, figsize=(5 * (len(names) + 1), 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, name in zip(axes, names):
        runs = [_run(results, name, k) for k in workers]
        values = [r["pass_s"] if r else 0.0 for r in runs]
        bars = ax.bar([_workers(k) for k in workers], values,
                      color=colors[:len(workers)])
        for bar, value in zip(bars, values):
            ax.annotate(f"{value:.3g} s", (bar.get_x() + bar.get_width() / 2, value),
                        ha="center", va="bottom", fontsize=8)
        unit = {"DaskHuberSVC": "iteration", "DaskBudgetSVC": "epoch",
                "DaskNystromSVC": "DCD pass"}[name]
        ax.set_ylabel(f"time per pass ({unit}), s")
        ax.set_title(f"{name}, {s['rows']:,} rows", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    ax = axes[-1]
    labels, width, seen = [], 0.8 / (1 + max(workers)), set()

    def once(label):
        """The legend label the first time, None after."""
        if label in seen:
            return None
        seen.add(label)
        return label

    for i, r in enumerate(results["runs"]):
        labels.append(f"{r['estimator'].replace('Dask', '').replace('SVC', '')}\n"
                      f"{_workers(r['workers'])}")
        ax.bar(i - 0.4 + width / 2, r["client_peak_mb"], width, color="tab:gray",
               label=once("client"))
        for j, peak in enumerate(r["worker_peak_mb"]):
            ax.bar(i - 0.4 + width * (j + 1.5), peak, width, color=colors[j % len(colors)],
                   label=once(f"worker {j}"))
    ax.axhline(s["data_mb"], color="k", ls="--", lw=1, label="data (rows x 28 x 8 B)")
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("peak RSS during the fit (MB)")
    ax.set_title("peak memory", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
