"""Engineering knobs, kept apart from the scientific parameters.

Change them here (or monkeypatch them in tests); no estimator takes them as
arguments.

JIT_OPTIONS
    Options of every serial ``numba.njit`` kernel.  ``fastmath`` allows
    re-association and contraction (so sums vectorise) but keeps IEEE
    semantics for NaN and inf, which the kernels never see anyway because
    input is validated before it reaches them.
CHUNK_STEPS
    SGD steps per compiled-kernel call.  Between calls the Python driver
    updates the progress bar; smaller chunks mean smoother progress and more
    call overhead (about a microsecond per call).
PREDICT_CHUNK_ROWS
    Rows of X per block when evaluating the kernel matrix against the support
    vectors in ``decision_function``; bounds the memory of prediction to
    ``PREDICT_CHUNK_ROWS * n_support_vectors`` doubles.
EMBED_CHUNK_BYTES
    Size of the float64 kernel block K(X_chunk, landmarks) that the Nystrom
    embedding computes at a time: the rows per chunk are this divided by
    8 * n_components.  The n x r embedding itself is stored once, in
    ``EMBED_DTYPE``.
EMBED_DTYPE
    Storage type of the Nystrom embedding inside ``NystromSVC.fit``.
    float32 halves the memory the paper names as Snacks' bottleneck; the
    kernel blocks and the projection are computed in float64 and rounded once.
NYSTROM_EIG_RTOL
    Rank cut-off of the Nystrom map: eigenvalues of K_mm below
    ``NYSTROM_EIG_RTOL * max eigenvalue`` are dropped instead of inverted.
    Dropping eigenvalue s changes a kernel value by at most about s; inverting
    it would amplify rounding errors by 1 / sqrt(s).
RESORT_C
    The margin bounds' worst-case overhead factor c (Guillory & Bilmes
    eq. 3): SortPeriod = c SortTime / EvalTime, so at most about 1/(c+1) of
    the time goes to re-sorting.  Changes speed only, never the model.
SCALED_REFERENCE
    Pegasos' bounds compare w with the best multiple a w' of the reference
    model instead of w' itself (see ``fastsvm.bounds._kernels.pegasos_steps``):
    the same decisions, fewer margins computed.  False gives the paper's
    Algorithm 3 exactly (the benchmark runs both).
PREFIX_SUMS_MAX_BYTES
    ``HuberSVC`` stores the prefix sums of all sorted points (n x d doubles,
    Algorithm 1) while they fit in this many bytes, and otherwise only the
    sum at the boundary (the paper's sparse-data variant, always used for
    CSR input).
LEVERAGE_POOL_FACTOR, LEVERAGE_SKETCH_SIZE
    Approximate ridge leverage-score sampling scores a uniform pool of
    ``LEVERAGE_POOL_FACTOR * n_components`` rows against a uniform sketch of
    at most ``LEVERAGE_SKETCH_SIZE`` rows (its cost is pool x sketch^2).
"""

JIT_OPTIONS = dict(
    cache=True,
    nogil=True,
    fastmath={"reassoc", "contract", "nsz", "arcp"},
)
CHUNK_STEPS = 20_000
PREDICT_CHUNK_ROWS = 4096
EMBED_CHUNK_BYTES = 64 * 2**20
EMBED_DTYPE = "float32"
NYSTROM_EIG_RTOL = 1e-7
RESORT_C = 10.0
PREFIX_SUMS_MAX_BYTES = 512 * 2**20
SCALED_REFERENCE = True
LEVERAGE_POOL_FACTOR = 10
LEVERAGE_SKETCH_SIZE = 1000
