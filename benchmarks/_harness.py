"""Small shared helpers of the benchmark scripts: timing, data, output.

Conventions every script follows:

* ``main(argv)`` parses its own arguments (so tests call it in-process) and
  returns the result dict it wrote.
* ``--out DIR`` is where results go; the default is ``benchmarks/results``.
* ``--smoke`` runs a tiny version (a few thousand training rows, one run,
  one epoch, a small budget) to check that the script still works.  Smoke
  output goes to ``--out`` or, without it, to a fresh temporary folder; it
  never goes to ``benchmarks/results``.
* Results are written as ``NAME.json`` (machine readable: settings, machine,
  date, versions, raw numbers), ``NAME.md`` (markdown tables) and, where a
  script draws one, ``NAME.png``.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parent.parent

# Smoke mode: training rows, test rows.
SMOKE_TRAIN_ROWS = 2000
SMOKE_TEST_ROWS = 1000


# ------------------------------------------------------------------ timing
def timed(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)``; return (its result, wall seconds by ``perf_counter``)."""
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def repeat(fn, n):
    """Call ``fn()`` ``n`` times; return (list of results, list of wall seconds)."""
    results, seconds = [], []
    for _ in range(n):
        result, s = timed(fn)
        results.append(result)
        seconds.append(s)
    return results, seconds


def median(values):
    """Median of a non-empty sequence (None for an empty one)."""
    values = [v for v in values if v is not None]
    return float(statistics.median(values)) if values else None


def mean_std(values):
    """(mean, sample standard deviation; 0 for a single value)."""
    values = np.asarray(values, dtype=float)
    std = float(values.std(ddof=1)) if values.size > 1 else 0.0
    return float(values.mean()), std


# -------------------------------------------------------------------- data
def subsample(X, y, n, seed=0):
    """A stratified random subsample of ``n`` rows (all rows when there are fewer)."""
    if n is None or X.shape[0] <= n:
        return X, y
    from sklearn.model_selection import train_test_split

    X_sub, _, y_sub, _ = train_test_split(X, y, train_size=n, stratify=y, random_state=seed)
    return X_sub, y_sub


def load_split(name, smoke=False):
    """``load_dataset(name)``, cut to the smoke sizes when ``smoke``."""
    from fastsvm.datasets import load_dataset

    split = load_dataset(name)
    return smoke_cut(*split) if smoke else split


def smoke_cut(X_train, y_train, X_test, y_test):
    """Stratified subsamples of the smoke sizes of a train/test split."""
    X_train, y_train = subsample(X_train, y_train, SMOKE_TRAIN_ROWS)
    X_test, y_test = subsample(X_test, y_test, SMOKE_TEST_ROWS)
    return X_train, y_train, X_test, y_test


# ------------------------------------------------------------ /proc memory
def proc_status(pid="self"):
    """The memory fields (VmRSS, VmHWM, RssAnon, RssFile, RssShmem) of ``/proc/PID/status``
    in MB (2^20 bytes); an empty dict once the process is gone."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
                    values[key] = int(rest.split()[0]) / 1024.0   # kB -> MB
    except OSError:
        pass
    return values


def reset_peak_rss():
    """Reset VmHWM of this process to its current RSS (Linux >= 4.0); whether it worked."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class PeakSampler:
    """A thread that calls ``read()`` (a dict of numbers) every ``interval`` seconds, and once
    more at the end, and keeps the largest value of each key in ``peak`` (starting from
    ``start``, so that no peak lies below a baseline)."""

    def __init__(self, read, interval, start=None):
        self.read, self.interval = read, interval
        self.peak = dict(start or {})
        self.samples = 1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self):
        for key, value in self.read().items():
            self.peak[key] = max(self.peak.get(key, 0.0), value)
        self.samples += 1

    def _run(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._sample()
        self._stop.set()
        self._thread.join()


# ----------------------------------------------------------- command line
def parser(description):
    """An ArgumentParser with the common ``--smoke`` and ``--out`` options."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--smoke", action="store_true",
                   help=f"tiny run ({SMOKE_TRAIN_ROWS} training rows, 1 run, 1 epoch) to check "
                        "that the script works; writes to --out or a temporary folder")
    p.add_argument("--out", type=Path, default=None,
                   help=f"output folder (default: {RESULTS_DIR.relative_to(REPO_ROOT)}; "
                        "a temporary folder with --smoke)")
    return p


def output_dir(args):
    """The folder to write to, created; smoke runs never write to ``RESULTS_DIR``."""
    out = args.out
    if out is None:
        out = Path(tempfile.mkdtemp(prefix="fastsvm-smoke-")) if args.smoke else RESULTS_DIR
    out = Path(out)
    if args.smoke and out.resolve() == RESULTS_DIR.resolve():
        raise SystemExit(f"--smoke must not write to {RESULTS_DIR}; give another --out")
    out.mkdir(parents=True, exist_ok=True)
    return out


def log(*parts):
    """Progress line on stderr, flushed (results go to files, not stdout)."""
    print(*parts, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ output
def machine_info():
    """Where and with what the benchmark ran."""
    import numba
    import scipy
    import sklearn

    import fastsvm

    commit = _git("rev-parse", "--short", "HEAD")
    # Uncommitted edits of the library make the commit only approximate.
    dirty = _git("status", "--porcelain", "--", "fastsvm")
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "fastsvm": fastsvm.__version__,
        "git_commit": commit,
        "git_dirty_fastsvm": None if dirty is None else bool(dirty),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "numba": numba.__version__,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
    }


def _git(*args):
    """Output of a git command in the repository (stripped), or None if git fails."""
    try:
        done = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def write_json(path, settings, results, wall_s=None, machine=None):
    """Write ``{"settings", "machine", "wall_s", "results"}`` to ``path``; return the dict.

    ``machine``: ``machine_info()`` taken when the run started (the code that
    ran); taken now when None.
    """
    payload = {"settings": settings, "machine": machine or machine_info(), "wall_s": wall_s,
               "results": results}
    Path(path).write_text(json.dumps(payload, indent=2, default=_json_default) + "\n")
    return payload


def write_outputs(out, name, settings, results, started, machine, render_markdown, plot):
    """Write ``name``.json, .md and .png into ``out`` and log the wall time since ``started``."""
    wall = time.perf_counter() - started
    payload = write_json(out / f"{name}.json", settings, results, wall_s=wall, machine=machine)
    (out / f"{name}.md").write_text(render_markdown(payload) + "\n")
    plot(payload, out / f"{name}.png")
    log(f"wrote {out / name}.{{json,md,png}} in {wall / 60:.1f} min")
    return payload


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def markdown_table(headers, rows):
    """A GitHub markdown table; cells are formatted with ``str``."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join("" if c is None else str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def header_lines(title, payload):
    """Markdown preamble: title, machine and date from a ``write_json`` payload."""
    m = payload["machine"]
    wall = payload.get("wall_s")
    return [
        f"# {title}",
        "",
        f"Run {m['date']} on {m['platform']} ({m['cpu_count']} CPUs), Python {m['python']}, "
        f"fastsvm {m['fastsvm']} (commit {m['git_commit']}"
        + (", with uncommitted library edits" if m.get("git_dirty_fastsvm") else "")
        + f"), numpy {m['numpy']}, "
        f"scikit-learn {m['scikit-learn']}, numba {m['numba']}."
        + (f" Wall time {wall / 60:.1f} min." if wall is not None else "")
        + (f" Note: {m['note']}" if m.get("note") else ""),
        "",
    ]


def pow2(x):
    """'2^k' when x is a power of two, else x in short form."""
    e = float(np.log2(x))
    return f"2^{int(round(e))}" if abs(e - round(e)) < 1e-9 else f"{x:g}"


def setup_matplotlib():
    """Import pyplot with the Agg backend; None if matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        log("matplotlib is not installed: no plot")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
