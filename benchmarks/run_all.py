"""Run every benchmark script, one after the other (``./run bench`` calls this).

    python benchmarks/run_all.py            # full runs, about 190 minutes on two cores
    python benchmarks/run_all.py --smoke    # seconds; writes to a temporary folder
    python benchmarks/run_all.py --only bsgd_vs_svc --sets a9a

Every argument except ``--only`` is passed on to each script unchanged
(``--smoke``, ``--out DIR``, ``--sets ...``; see each script's ``--help``).
The scripts run in this one process, sequentially, never in parallel, so
that they do not disturb each other's timings.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402
import bounds_paper_tables  # noqa: E402
import bsgd_paper_tables  # noqa: E402
import bsgd_vs_svc  # noqa: E402
import dask_scaling  # noqa: E402
import defaults_vs_svc  # noqa: E402
import imbalanced_weights  # noqa: E402
import margin_sgd_vs_svc  # noqa: E402
import multiclass_split  # noqa: E402
import nystrom_memory  # noqa: E402
import small_sets_cv  # noqa: E402
import snacks_paper_tables  # noqa: E402

SCRIPTS = {
    "bsgd_paper_tables": bsgd_paper_tables.main,
    "bsgd_vs_svc": bsgd_vs_svc.main,
    "snacks_paper_tables": snacks_paper_tables.main,
    "bounds_paper_tables": bounds_paper_tables.main,
    "margin_sgd_vs_svc": margin_sgd_vs_svc.main,
    "imbalanced_weights": imbalanced_weights.main,
    "defaults_vs_svc": defaults_vs_svc.main,
    "small_sets_cv": small_sets_cv.main,
    "multiclass_split": multiclass_split.main,
    "nystrom_memory": nystrom_memory.main,
    "dask_scaling": dask_scaling.main,
}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], add_help=False)
    p.add_argument("--only", nargs="+", choices=list(SCRIPTS), default=list(SCRIPTS))
    p.add_argument("-h", "--help", action="store_true")
    args, rest = p.parse_known_args(argv)
    if args.help:
        print(__doc__)
        return {}
    # One temporary folder for all smoke outputs when none is given.
    if "--smoke" in rest and "--out" not in rest:
        rest += ["--out", tempfile.mkdtemp(prefix="fastsvm-smoke-")]
    payloads = {}
    for name in args.only:
        H.log(f"=== {name} {' '.join(rest)}")
        started = time.perf_counter()
        payloads[name] = SCRIPTS[name](rest)
        H.log(f"=== {name} done in {(time.perf_counter() - started) / 60:.1f} min")
    return payloads


if __name__ == "__main__":
    main()
