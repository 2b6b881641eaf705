"""Peak memory of NystromSVC against n, its embedding in memory vs in a file.

NystromSVC trains its linear SVM on the n x r float32 Nystrom embedding of
the training rows (r <= n_components), n * r * 4 bytes: 8 GB at n = 2
million and m = 1,000.  ``max_embedding_mb`` caps what the fit keeps in its
own memory: beyond it the embedding is written to an anonymous temporary
file and the solver reads it through a memory map, so its pages belong to
the operating system's page cache (dropped, never swapped, under pressure)
rather than to the process.  This benchmark measures what that buys: the
peak of the fit's anonymous memory against n, for

* "memory": ``NystromSVC(n_components=1000, max_embedding_mb=1e9,
  random_state=0)``, the embedding always in memory;
* "file": the same with ``max_embedding_mb=256`` (``--file-mb``), the
  embedding in the file from n = 67,109 rows on (r = 1000);
* "BudgetSVC": ``BudgetSVC(random_state=0)`` at its defaults (budget 500,
  5 epochs), the reference whose memory does not depend on n * m.

NystromSVC otherwise at its defaults (C = 1, gamma = 'scale', solver='dcd',
tol = 1e-3).  The model does not depend on the budget: both modes must give
the same coefficients (compared by a hash) and the same accuracy.

Data: a generated HIGGS-like set, ``make_classification(n_samples=max(n) +
20,000, n_features=28, n_informative=20, flip_y=0.05, class_sep=1.0,
random_state=0)``, float64 (what a user passes; the fit validates it
without a copy), generated once and saved to a temporary folder.  Each fit
takes the first n rows as training rows and the last 20,000 (the same for
every n) as test rows.

Every fit runs in a fresh Python process (``--child``), so that one fit's
peak is not another's.  The child loads its rows (copied into its own
memory), runs a tiny warm-up fit of the same estimator and mode (so numba's
kernels are loaded or compiled before the measurement), then reads its
baseline from ``/proc/self/status`` (VmRSS, RssAnon) and resets the peak RSS
(VmHWM, by writing 5 to ``/proc/self/clear_refs``).  During the fit a
background thread reads ``/proc/self/status`` every 20 ms (the solvers
release the GIL) and keeps the largest RssAnon, VmRSS and RssFile.
Reported per (n, mode):

* peak anonymous memory increase over the baseline, MB (2^20 bytes): the
  headline; the process's own memory (heap, NumPy arrays, BLAS buffers),
  what would be swapped or killed under pressure;
* peak RSS increase: max(VmHWM after the fit, sampled VmRSS) minus the
  baseline VmRSS.  In "file" mode it includes the page-cache pages of the
  mapped embedding that the solver touched (RssFile), which the kernel can
  drop, so it grows with n * r in both modes;
* embedding size, fit time (``perf_counter`` around ``fit``), landmark,
  embedding and solver times (``training_info_``), passes (``n_iter_``),
  final duality gap, test accuracy.  The landmark time is mostly the
  pivoted Cholesky factorisation of the 1000 x 1000 K_mm (0.1 s); it does
  not depend on n.

Sizes: n = 250,000, 500,000, 1,000,000 and 2,000,000 (``--sizes``).  Modes
that cannot run are skipped and say so: "memory" when the embedding plus
the data would exceed 90 % of MemAvailable, "file" when the temporary
folder lacks the disk space.  On a tmpfs temporary folder the file's pages
are shared memory that cannot be dropped without swap, so the file saves
nothing; the run records the folder's file system.

Run ``python benchmarks/nystrom_memory.py`` (estimate: about 11 minutes on
two cores, extrapolated linearly from fits at n = 100,000, 400,000 and
1,000,000: per 100,000 rows a NystromSVC fit takes about 4.5 s in memory and
6 s with the file (embedding 3.4 s and 4.6 s, solver 1.3 s; 40-50 passes at
every n), BudgetSVC 3 s; plus a few seconds per process.  The 2-million-row
NystromSVC fits take about 1.5 and 2 minutes, BudgetSVC 1 minute.  It
needs about 9 GB of free memory for the 2-million-row "memory" fit and 8 GB
of disk in the temporary folder); ``--modes`` picks the modes,
``--smoke`` for a check in seconds (n = 3,000 and 6,000, 1,000 test rows,
n_components = 50, the file mode at 0.1 MB, still one process per fit).
Output: ``benchmarks/results/nystrom_memory.{json,md,png}``.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

NAME = "nystrom_memory"
SIZES = [250_000, 500_000, 1_000_000, 2_000_000]
SMOKE_SIZES = [3_000, 6_000]
N_TEST, SMOKE_N_TEST = 20_000, 1_000
COMPONENTS, SMOKE_COMPONENTS = 1000, 50
MEMORY_MB = 1e9                  # "memory" mode: a budget no embedding reaches
FILE_MB, SMOKE_FILE_MB = 256.0, 0.1
MODES = ("memory", "file", "BudgetSVC")
SAMPLE_S = 0.02                  # sampling interval of /proc/self/status during a fit
DATA = dict(n_features=28, n_informative=20, flip_y=0.05, class_sep=1.0, random_state=0)
MB = 2.0**20
MEMORY_HEADROOM = 0.9            # "memory" runs when the embedding + data < this x MemAvailable
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS")


def parse_args(argv):
    p = H.parser(__doc__.split("\n\n")[0])
    p.add_argument("--sizes", nargs="+", type=int, default=None,
                   help="training rows n (default: " + " ".join(map(str, SIZES))
                        + "; with --smoke: " + " ".join(map(str, SMOKE_SIZES)) + ")")
    p.add_argument("--components", type=int, default=None,
                   help=f"NystromSVC n_components (default {COMPONENTS}; smoke "
                        f"{SMOKE_COMPONENTS})")
    p.add_argument("--file-mb", type=float, default=None,
                   help=f"max_embedding_mb of the 'file' mode (default {FILE_MB:g}; smoke "
                        f"{SMOKE_FILE_MB:g})")
    p.add_argument("--n-test", type=int, default=None,
                   help=f"test rows (default {N_TEST}; smoke {SMOKE_N_TEST})")
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES),
                   help="what to fit at each n (default: all)")
    p.add_argument("--sets", nargs="*", default=None,
                   help="ignored: the data are generated (accepted so that run_all.py can pass "
                        "it on to every script)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)   # internal: one fit (JSON job)
    args = p.parse_args(argv)
    if args.sizes is None:
        args.sizes = SMOKE_SIZES if args.smoke else SIZES
    if args.components is None:
        args.components = SMOKE_COMPONENTS if args.smoke else COMPONENTS
    if args.file_mb is None:
        args.file_mb = SMOKE_FILE_MB if args.smoke else FILE_MB
    if args.n_test is None:
        args.n_test = SMOKE_N_TEST if args.smoke else N_TEST
    return args


def mem_available_mb():
    """MemAvailable of ``/proc/meminfo`` in MB (None where unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def filesystem_of(path):
    """The file-system type of the mount holding ``path`` (from /proc/mounts), or None."""
    path, best = os.path.realpath(path), (None, "")
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                mount, fstype = parts[1], parts[2]
                if (path == mount or path.startswith(mount.rstrip("/") + "/")) \
                        and len(mount) > len(best[1]):
                    best = (fstype, mount)
    except OSError:
        return None
    return best[0]


# -------------------------------------------------------------------- data
def generate(n_rows, folder):
    """The generated set of ``n_rows`` rows, saved as X.npy and y.npy in ``folder``."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n_rows, **DATA)
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", y)


def load_rows(folder, n, n_test):
    """The first ``n`` rows (training) and the last ``n_test`` rows (test), copied into the
    process's own memory."""
    X = np.load(folder / "X.npy", mmap_mode="r")
    y = np.load(folder / "y.npy", mmap_mode="r")
    split = (np.array(X[:n]), np.array(y[:n]), np.array(X[-n_test:]), np.array(y[-n_test:]))
    del X, y
    return split


def make_estimator(mode, components, file_mb, budget_mb=None):
    from fastsvm import BudgetSVC, NystromSVC

    if mode == "BudgetSVC":
        return BudgetSVC(random_state=0)
    if budget_mb is None:
        budget_mb = MEMORY_MB if mode == "memory" else file_mb
    return NystromSVC(n_components=components, max_embedding_mb=budget_mb, random_state=0)


# -------------------------------------------------------------- one fit (child)
def child(job):
    """In a fresh process: load the rows, warm up, measure one fit; the result dict."""
    import gc

    folder, n, n_test, mode = Path(job["data"]), job["n"], job["n_test"], job["mode"]
    X, y, X_test, y_test = load_rows(folder, n, n_test)
    # a tiny fit of the same estimator and embedding path: numba's kernels are loaded (or
    # compiled) before the baseline
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm = make_estimator(mode, min(job["components"], 20), job["file_mb"],
                              budget_mb=MEMORY_MB if mode == "memory" else 1e-6)
        if mode == "BudgetSVC":
            warm.set_params(budget=20, epochs=1)
        warm.fit(X[:300], y[:300]).predict(X_test[:10])
        del warm
    gc.collect()
    clf = make_estimator(mode, job["components"], job["file_mb"])
    base = H.proc_status()
    hwm_reset = H.reset_peak_rss()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with H.PeakSampler(H.proc_status, SAMPLE_S, base) as sampler:
            started = time.perf_counter()
            clf.fit(X, y)
            fit_s = time.perf_counter() - started
    end = H.proc_status()
    peak_rss = max(sampler.peak["VmRSS"], end["VmHWM"] if hwm_reset else 0.0)
    accuracy = float(np.mean(clf.predict(X_test) == y_test))
    info = clf.training_info_
    digest = hashlib.sha256()
    for part in (clf.coef_ if mode != "BudgetSVC" else clf.support_vectors_, clf.intercept_):
        digest.update(np.ascontiguousarray(part).tobytes())
    result = {
        "n": n, "mode": mode, "fit_s": fit_s, "accuracy": accuracy,
        "time_fit_s": info.get("time_fit_s"),
        "baseline_rss_mb": base["VmRSS"], "baseline_anon_mb": base["RssAnon"],
        "peak_anon_mb": sampler.peak["RssAnon"], "peak_rss_mb": peak_rss,
        "peak_file_mb": sampler.peak["RssFile"], "peak_shmem_mb": sampler.peak.get("RssShmem"),
        "vmhwm_mb": end["VmHWM"], "vmhwm_reset": hwm_reset,
        "peak_anon_increase_mb": sampler.peak["RssAnon"] - base["RssAnon"],
        "peak_rss_increase_mb": peak_rss - base["VmRSS"],
        "peak_file_increase_mb": sampler.peak["RssFile"] - base["RssFile"],
        "samples": sampler.samples, "model_sha256": digest.hexdigest(),
        "warnings": sorted({f"{w.category.__name__}: {w.message}" for w in caught}),
    }
    if mode == "BudgetSVC":
        result["n_support"] = int(np.sum(clf.n_support_))
    else:
        gap = info.get("duality_gap", [None])[0]
        result.update(
            embedding_mb=info["embedding_bytes"] / MB,
            embedding_in_memory=bool(info["embedding_in_memory"]),
            embedding_shape=list(info["embedding_shape"]),
            time_landmarks_s=info.get("time_landmarks_s"),
            time_embedding_s=info["time_embedding_s"], time_solver_s=info["time_solver_s"],
            n_iter=int(np.max(clf.n_iter_)),
            duality_gap=float(gap[-1] if isinstance(gap, (list, tuple, np.ndarray)) else gap)
            if gap is not None else None)
    return result


def run_child(job):
    """``child(job)`` in a fresh Python process; its result, or a dict with the error."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child",
                           json.dumps(job)], capture_output=True, text=True)
    if done.returncode != 0:
        return {"n": job["n"], "mode": job["mode"], "error": f"exit {done.returncode}: "
                + done.stderr.strip()[-2000:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def skip_reason(mode, n, args, folder):
    """Why ``mode`` cannot run at ``n`` on this machine (None when it can)."""
    embedding_mb = n * args.components * 4 / MB
    data_mb = (n + args.n_test) * (DATA["n_features"] + 1) * 8 / MB
    if mode == "memory":
        available = mem_available_mb()
        if available is not None and embedding_mb + data_mb > MEMORY_HEADROOM * available:
            return (f"embedding {embedding_mb:,.0f} MB + data {data_mb:,.0f} MB exceed "
                    f"{100 * MEMORY_HEADROOM:g} % of MemAvailable ({available:,.0f} MB)")
    if mode == "file" and embedding_mb > args.file_mb:
        free = shutil.disk_usage(tempfile.gettempdir()).free / MB
        if embedding_mb > 0.95 * free:
            return (f"embedding {embedding_mb:,.0f} MB exceeds the free disk space of "
                    f"{tempfile.gettempdir()} ({free:,.0f} MB)")
    return None


# -------------------------------------------------------------------- main
def main(argv=None):
    args = parse_args(argv)
    if args.child is not None:
        result = child(json.loads(args.child))
        print(json.dumps(result, default=H._json_default))
        return result
    out = H.output_dir(args)
    machine = H.machine_info()
    started = time.perf_counter()
    modes = [m for m in MODES if m in args.modes]
    tmp = tempfile.gettempdir()
    settings = {
        "smoke": args.smoke, "sizes": args.sizes, "n_test": args.n_test,
        "n_components": args.components, "modes": modes,
        "max_embedding_mb": {"memory": MEMORY_MB, "file": args.file_mb},
        "nystrom_params": make_estimator("memory", args.components, args.file_mb).get_params(),
        "budget_params": make_estimator("BudgetSVC", 0, 0).get_params(),
        "data": {"generator": "sklearn.datasets.make_classification",
                 "n_samples": max(args.sizes) + args.n_test, "dtype": "float64", **DATA},
        "sample_interval_s": SAMPLE_S, "tempdir": tmp, "tempdir_filesystem": filesystem_of(tmp),
        "mem_available_mb_at_start": mem_available_mb(),
        "threads": {var: os.environ.get(var) for var in THREAD_VARIABLES},
    }
    results = []
    with tempfile.TemporaryDirectory(prefix="fastsvm-nystrom-memory-") as folder:
        folder = Path(folder)
        H.log(f"generating {max(args.sizes) + args.n_test:,} rows")
        generate(max(args.sizes) + args.n_test, folder)
        for n in args.sizes:
            for mode in modes:
                reason = skip_reason(mode, n, args, folder)
                if reason is not None:
                    H.log(f"  n={n:,} {mode}: skipped ({reason})")
                    results.append({"n": n, "mode": mode, "skipped": reason})
                    continue
                job = {"data": str(folder), "n": n, "n_test": args.n_test, "mode": mode,
                       "components": args.components, "file_mb": args.file_mb}
                r = run_child(job)
                results.append(r)
                if "error" in r:
                    H.log(f"  n={n:,} {mode}: FAILED {r['error'][-300:]}")
                else:
                    H.log(f"  n={n:,} {mode}: fit {r['fit_s']:.1f} s, peak anon "
                          f"+{r['peak_anon_increase_mb']:,.1f} MB, peak RSS "
                          f"+{r['peak_rss_increase_mb']:,.1f} MB, acc {r['accuracy']:.4f}"
                          + (f", embedding {r['embedding_mb']:,.1f} MB "
                             f"({'memory' if r['embedding_in_memory'] else 'file'})"
                             if "embedding_mb" in r else ""))
    return H.write_outputs(out, NAME, settings, results, started, machine, render_markdown, plot)


# ------------------------------------------------------------------ output
def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def render_markdown(payload):
    s, results = payload["settings"], payload["results"]
    lines = H.header_lines("NystromSVC peak memory against n: embedding in memory vs in a "
                           "file", payload)
    if s["smoke"]:
        lines += ["**Smoke run** (tiny n, n_components = 50): the numbers are dominated by "
                  "fixed costs and meaningless.", ""]
    lines += [
        f"Data: `make_classification` ({s['data']['n_features']} features, "
        f"{s['data']['n_informative']} informative, flip_y = {s['data']['flip_y']:g}, "
        f"class_sep = {s['data']['class_sep']:g}, seed {s['data']['random_state']}), float64; "
        f"the first n rows train, the last {s['n_test']:,} rows test (the same for every n). "
        f"NystromSVC(n_components={s['n_components']}, random_state=0) at its defaults "
        "otherwise (C = 1, gamma = 'scale', solver = 'dcd'); \"memory\": "
        f"max_embedding_mb = {s['max_embedding_mb']['memory']:g}, \"file\": "
        f"max_embedding_mb = {s['max_embedding_mb']['file']:g}. BudgetSVC(random_state=0) "
        f"at its defaults (budget {s['budget_params']['budget']}, "
        f"{s['budget_params']['epochs']} epochs). Each fit in a fresh process.",
        "",
        "**peak anon +**: the largest RssAnon during the fit (sampled every "
        f"{1000 * s['sample_interval_s']:g} ms) minus RssAnon before it: the process's own "
        "memory, the headline. **peak RSS +**: max(VmHWM after the fit, sampled VmRSS) minus "
        "VmRSS before it (VmHWM reset before the fit); in \"file\" mode it includes the "
        "page-cache pages of the mapped embedding that the solver read (RssFile), which the "
        "kernel can drop under memory pressure, so it grows with n x r in both modes. "
        "**file +**: the increase of RssFile. MB = 2^20 bytes. Temporary folder "
        f"`{s['tempdir']}` ({s['tempdir_filesystem'] or 'file system unknown'}"
        + ("; tmpfs: the file's pages are shared memory and cannot be dropped without swap, "
           "so the file saves nothing here" if s["tempdir_filesystem"] == "tmpfs" else "")
        + ").",
        "",
    ]
    table, notes = [], []
    for r in results:
        label = r["mode"]
        if "skipped" in r or "error" in r:
            table.append([f"{r['n']:,}", label] + ["-"] * 12)
            notes.append(f"- n = {r['n']:,}, {label}: "
                         + (f"skipped: {r['skipped']}" if "skipped" in r
                            else f"failed: {r['error'][-300:]}"))
            continue
        emb = r.get("embedding_mb")
        table.append([
            f"{r['n']:,}", label,
            "-" if emb is None else f"{emb:,.1f}",
            "-" if emb is None else ("memory" if r["embedding_in_memory"] else "file"),
            f"{r['peak_anon_increase_mb']:,.1f}",
            f"{r['peak_rss_increase_mb']:,.1f}",
            f"{r['peak_file_increase_mb']:,.1f}",
            f"{r['fit_s']:.2f}", _fmt(r.get("time_landmarks_s"), ".2f"),
            _fmt(r.get("time_embedding_s"), ".2f"), _fmt(r.get("time_solver_s"), ".2f"),
            r.get("n_iter", "-"),
            _fmt(r.get("duality_gap"), ".1e"),
            f"{100 * r['accuracy']:.2f}"])
        for w in r["warnings"]:
            notes.append(f"- n = {r['n']:,}, {label}: {w}")
    lines.append(H.markdown_table(
        ["n", "mode", "embedding (MB)", "embedding in", "peak anon + (MB)", "peak RSS + (MB)",
         "file + (MB)", "fit (s)", "landmarks (s)", "embed (s)", "solver (s)", "passes", "duality gap",
         "accuracy (%)"], table))
    lines += ["", "Same model in both modes (coefficient hash and accuracy):", ""]
    for n in s["sizes"]:
        pair = {r["mode"]: r for r in results if r["n"] == n and "model_sha256" in r}
        if "memory" in pair and "file" in pair:
            same = pair["memory"]["model_sha256"] == pair["file"]["model_sha256"]
            ratio = (pair["file"]["peak_anon_increase_mb"]
                     / max(pair["memory"]["peak_anon_increase_mb"], 1e-9))
            lines.append(f"- n = {n:,}: {'identical' if same else 'DIFFERENT'}; peak anon "
                         f"+ of file / memory = {ratio:.3f}")
    lines += ["", "Notes and warnings:", ""]
    lines += notes or ["- none"]
    return "\n".join(lines)


def plot(payload, path):
    plt = H.setup_matplotlib()
    if plt is None:
        return
    from matplotlib.ticker import FuncFormatter, LogLocator

    s, results = payload["settings"], payload["results"]
    ok = [r for r in results if "fit_s" in r]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    styles = {"memory": ("tab:red", "o"), "file": ("tab:blue", "s"),
              "BudgetSVC": ("tab:green", "^")}
    for mode in s["modes"]:
        rows = sorted((r for r in ok if r["mode"] == mode), key=lambda r: r["n"])
        if not rows:
            continue
        color, marker = styles[mode]
        label = mode if mode == "BudgetSVC" else f"NystromSVC, {mode}"
        n = [r["n"] for r in rows]
        left.plot(n, [max(r["peak_anon_increase_mb"], 1e-2) for r in rows], marker=marker,
                  color=color, label=f"{label}: peak anon +")
        if mode == "file":
            left.plot(n, [max(r["peak_rss_increase_mb"], 1e-2) for r in rows], marker=marker,
                      color=color, ls=":", mfc="none", label=f"{label}: peak RSS + (page cache)")
        right.plot(n, [r["fit_s"] for r in rows], marker=marker, color=color, label=label)
    sizes = sorted(s["sizes"])
    left.plot(sizes, [n * s["n_components"] * 4 / 2**20 for n in sizes], "k--", lw=1,
              marker="x", ms=5, label=f"n x {s['n_components']} x 4 bytes (embedding)")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [f"{n:,}" for n in sizes], fontsize=8)
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.set_xlabel("training rows n")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    left.set_ylabel("increase over the baseline (MB)")
    left.set_title("peak memory of the fit")
    right.set_ylabel("fit time (s)")
    right.set_title("fit time")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
