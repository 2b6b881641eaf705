"""The main job: fastsvm's solvers on the embedded a9a (UCI Adult) data, next to SVC.

Run ``./run demo`` (or ``python -m fastsvm.demo``).  Trains on a9a's 32,561
training rows with the BSGD paper's settings (C = 2^5, gamma = 2^-7), tests on
its 16,281 test rows, and prints accuracy, training time and model size
(support vectors, or landmarks for NystromSVC) of each solver, plus BSGD's
instruments (merges, time in budget maintenance), the Snacks time split
(embedding, solver), and a linear baseline: HuberSVC, L-BFGS certified by its
duality gap, skipping margin computations with bounds on their change
(lambda = 1e-4), and
MarginSGDSVC, one-pass margin SGD that tunes its own gamma and margin M.
"""

import argparse
import time

from sklearn.svm import SVC

from . import BudgetSVC, HuberSVC, MarginSGDSVC, NystromSVC
from .datasets import load_embedded_a9a

C, GAMMA = 2.0 ** 5, 2.0 ** -7


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m fastsvm.demo", description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=500, help="support vector budget (default 500)")
    parser.add_argument("--epochs", type=int, default=20, help="passes over the data (default 20)")
    parser.add_argument("--components", type=int, default=800,
                        help="NystromSVC landmarks (default 800, the Snacks paper's for a9a)")
    parser.add_argument("--margin-gamma", type=float, default=None,
                        help="MarginSGDSVC's gamma (default: tuned with M by successive "
                             "halving; a value tunes M alone)")
    parser.add_argument("--no-svc", action="store_true", help="skip scikit-learn's SVC (about a minute)")
    args = parser.parse_args(argv)

    X, y, Xt, yt = load_embedded_a9a()
    print(f"a9a (UCI Adult, embedded): {X.shape[0]} train / {Xt.shape[0]} test rows, "
          f"{X.shape[1]} features; C = 2^5, gamma = 2^-7\n")
    rows = []
    clf = BudgetSVC(C=C, gamma=GAMMA, budget=args.budget, epochs=args.epochs,
                    learning_rate="pegasos", intercept_scaling=0.0,     # the paper's Alg. 1
                    random_state=0, verbose=1)
    start = time.perf_counter()
    clf.fit(X, y)
    rows.append((f"fastsvm BudgetSVC (B={args.budget}, {args.epochs} epochs)", time.perf_counter() - start,
                 clf.score(Xt, yt), clf.dual_coef_.shape[1]))
    info = clf.training_info_
    nys = NystromSVC(C=C, gamma=GAMMA, n_components=args.components, solver="assg", random_state=0,
                     verbose=1)
    start = time.perf_counter()
    nys.fit(X, y)
    rows.append((f"fastsvm NystromSVC (Snacks, m={args.components})", time.perf_counter() - start,
                 nys.score(Xt, yt), args.components))
    huber = HuberSVC(C=1.0 / (1e-4 * X.shape[0]))
    start = time.perf_counter()
    huber.fit(X, y)
    rows.append(("fastsvm HuberSVC (linear, margin bounds)", time.perf_counter() - start,
                 huber.score(Xt, yt), 0))
    msgd = MarginSGDSVC(gamma="auto" if args.margin_gamma is None else args.margin_gamma,
                        random_state=0)
    start = time.perf_counter()
    msgd.fit(X, y)
    rows.append(("fastsvm MarginSGDSVC (one pass, tuned)", time.perf_counter() - start,
                 msgd.score(Xt, yt), len(msgd.support_)))
    if not args.no_svc:
        print("training scikit-learn SVC (exact SMO solver; about a minute) ...", flush=True)
        svc = SVC(C=C, gamma=GAMMA)
        start = time.perf_counter()
        svc.fit(X, y)
        rows.append(("scikit-learn SVC (exact)", time.perf_counter() - start, svc.score(Xt, yt),
                     len(svc.support_)))

    print(f"\n{'solver':<42} {'train time':>10} {'test accuracy':>14} {'SVs':>7}")
    for name, seconds, acc, n_sv in rows:
        print(f"{name:<42} {seconds:>9.2f}s {acc:>13.2%} {n_sv:>7}")
    print("(SVs: support vectors; landmarks for NystromSVC; 0 for the linear model)")
    if not args.no_svc:
        svc_s, svc_sv = rows[-1][1], rows[-1][3]
        print(f"\nBudgetSVC trained {svc_s / rows[0][1]:.1f}x faster than SVC, with "
              f"{svc_sv / rows[0][3]:.0f}x fewer support vectors; NystromSVC "
              f"{svc_s / rows[1][1]:.1f}x faster.")
    print(f"BSGD: {info['steps']:,} SGD steps at {info['steps_per_second']:,.0f} steps/s; "
          f"{info['merges']:,} merges (frequency {info['merge_frequency']:.0%}), "
          f"{info['us_per_merge']:.1f} us per merge, {info['time_maintenance_s']:.2f} s in budget maintenance.")
    ninfo = nys.training_info_
    print(f"Snacks: embedding {ninfo['embedding_shape'][0]:,} x {ninfo['embedding_shape'][1]} "
          f"({ninfo['embedding_bytes'] / 2**20:.0f} MB float32) in "
          f"{ninfo['time_landmarks_s'] + ninfo['time_embedding_s']:.2f} s, ASSG "
          f"{nys.n_iter_[0]} stages in {ninfo['time_solver_s']:.2f} s.")
    hinfo = huber.training_info_
    print(f"HuberSVC: {huber.n_iter_[0]} L-BFGS evaluations to a relative duality gap of "
          f"{hinfo['duality_gap'][0]:.1e}; the bounds spared computing "
          f"{1 - hinfo['examined_fraction'][0]:.0%} of the margins.")
    minfo = msgd.training_info_
    n_full = sum(c["n_rows"] == X.shape[0] for c in minfo["candidates"])
    print(f"MarginSGD: {minfo['n_passes']} passes ({minfo['n_passes'] - n_full} on halving subsets "
          f"ranking the (gamma, M) candidates, {n_full} over all rows; validated on "
          f"{minfo['n_validation']:,} "
          f"{'held-out' if minfo['sampling'] == 'permutation' else 'out-of-bag'} rows); chose gamma = {msgd.gamma_:.3g}, "
          f"M = {msgd.M_:g}, offset {msgd.intercept_[0]:+.3f}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
