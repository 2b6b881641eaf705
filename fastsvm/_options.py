"""Engineering knobs, kept apart from the scientific parameters.

Change them here (or monkeypatch them in tests); no estimator takes them as
arguments.

JIT_OPTIONS, KERNEL_CACHE
    Options of every serial ``numba.njit`` kernel.  ``KERNEL_CACHE``, whether
    numba caches their machine code on disk, is True unless no folder for the
    cache can be written (see :mod:`fastsvm._cache`).  ``fastmath`` allows
    re-association and contraction (so sums vectorise) but keeps IEEE
    semantics for NaN and inf, which the kernels never see anyway because
    input is validated before it reaches them.
CHUNK_STEPS
    SGD steps per compiled-kernel call.  Between calls the Python driver
    updates the progress bar; smaller chunks mean smoother progress and more
    call overhead (about a microsecond per call).
MARGIN_SGD_BLOCK
    Visits per block in the one-pass margin SGD: f at a block's points from
    the support vectors before it is one BLAS product, the rest of the block
    is sequential at O(block^2) kernel values.
MARGIN_SGD_DENSE_FROM
    CSR input with at least this share of non-zeros is multiplied in dense
    blocks (BLAS) by the margin SGD; sparser rows go through scipy's sparse
    products against the support vectors' CSR rows (time and memory linear in
    the stored entries).  A block of 256 rows against 3,000 support vectors,
    sparse product / dense BLAS: a9a (11 % non-zeros, 123 features) 75 ms /
    15 ms, a generated text-like set (0.5 %, 5,000 features) 10 ms / 400 ms.
MARGIN_SGD_DENSE_COPY_BYTES
    Such CSR input is made dense once for the whole fit, instead of block by
    block in every pass, when the dense array takes at most this many bytes
    (fit 11-12 % faster on a9a, usps and skin_nonskin).
MARGIN_SGD_OFFSET_MIN_GAIN
    Least share of validation rows an offset must turn from wrong to right
    (net) to be kept (see ``margin_sgd.solver.accuracy_offset``).
PREDICT_CHUNK_ROWS, PREDICT_CHUNK_BYTES
    Rows of X per block when evaluating the kernel matrix against the support
    vectors in ``decision_function``: ``PREDICT_CHUNK_ROWS``, fewer where the
    block of kernel values would exceed ``PREDICT_CHUNK_BYTES`` (models of
    more than 8,192 support vectors, as one-vs-one over many classes).
    ``decision_function`` itself works in blocks of rows whose binary models'
    values fill a quarter of ``PREDICT_CHUNK_BYTES`` (one-vs-one over 30
    classes: 435 values a row, 19,000 rows a block).
DENSIFY_MIN_DENSITY, DENSIFY_MAX_FEATURES
    CSR input with at least this share of non-zeros and at most this many
    features is evaluated against support vectors in dense blocks: the
    single-threaded CSR x dense product is slower than a dense BLAS product
    from about 5 % non-zeros on (against 3,000 support vectors: a9a at 11 %
    2.7x faster dense, usps at 100 % 5.7x; against 500, a9a breaks even and
    ijcnn1 at 59 % is 1.5x faster).
EMBED_CHUNK_BYTES
    Size of the float64 kernel block K(X_chunk, landmarks) that the Nystrom
    embedding computes at a time: the rows per chunk are this divided by
    8 * n_components.  The n x r embedding itself is stored once, in
    ``EMBED_DTYPE``.
EMBED_DTYPE
    Storage type of the Nystrom embedding inside ``NystromSVC.fit``.
    float32 halves the memory the paper names as Snacks' bottleneck; the
    kernel blocks and the map are computed in float64, rounded once, and
    multiplied in float32 (about 1.6x faster than in float64).  The map
    L^(-T) amplifies the block's rounding (entries of 10-200 at the defaults:
    up to 3e-4 in an entry), so the stored rows, on which the duality gap is
    certified, differ that much from ``transform``'s float64 ones (see
    ``NystromSVC``, Stopping).
NYSTROM_RTOL
    Rank cut-off of the Nystrom map: every pivot L_jj^2 of the Cholesky
    factor of the kept landmarks' K_JJ exceeds ``NYSTROM_RTOL *
    lambda_max(K_mm)`` (a plain factorisation of all m landmarks is kept only
    when it meets this); otherwise the pivoted factorisation of K_mm stops
    when no remaining (Schur complement) diagonal exceeds the cut-off, and
    the landmarks left are dropped instead of inverted.  Dropping them
    changes a kernel value by at most that; inverting a pivot p would
    amplify rounding errors by 1 / sqrt(p).
RESORT_C
    The margin bounds' worst-case overhead factor c (Guillory & Bilmes
    eq. 3): SortPeriod = c SortTime / EvalTime, so at most about 1/(c+1) of
    the time goes to re-sorting.  Changes speed only, never the model.
SCALED_REFERENCE
    Pegasos' bounds compare w with the best multiple a w' of the reference
    model instead of w' itself (see ``fastsvm.bounds._kernels.pegasos_steps``):
    the same decisions, fewer margins computed.  False gives the paper's
    Algorithm 3 exactly (the benchmark runs both).
PACKED_DENSE_FROM
    CSR input with at least this share of stored entries reaches the compiled
    row loops of HuberSVC, PegasosSVC and BudgetSVC as a dense array (see
    ``fastsvm._packed.PackedData``), which takes at most 1 / PACKED_DENSE_FROM
    x 8 bytes (32) per stored entry, against 16 for the CSR arrays with int64
    indices, and fewer from 50 % stored entries on.  The CSR loops read each
    entry through its column index and do not vectorise: fit time, CSR input /
    the same rows dense, HuberSVC and linear PegasosSVC at their defaults:
    a9a (11 % stored) 0.60x and 0.61x (CSR faster), covtype (22 %) 1.01x and
    1.24x, phishing (44 %) 1.44x and 1.39x, ijcnn1 (59 %) 1.16x and 1.49x,
    usps (100 %, 256 features) 3.9x and 4.7x; BudgetSVC 0.88x on a9a, 1.15x
    on ijcnn1, 1.07x on usps.  The break-even lies at 18-22 % stored entries.
PREFIX_SUMS_MAX_BYTES
    ``HuberSVC`` stores the prefix sums of all sorted points (n x d doubles,
    Algorithm 1) while they fit in this many bytes, and otherwise only the
    sum at the boundary (the paper's sparse-data variant), for dense and CSR
    input alike.
DENSE_VECTORS_MAX_BYTES
    BudgetSVC and kernel PegasosSVC train on support vectors stored as dense
    rows of every feature (MarginSGDSVC keeps those of sparse data as CSR
    rows, as the published ``support_vectors_`` of sparse data are).  On
    sparse data with very many features (hashed text: 2^20 columns) that is
    refused with a clear error beyond this many bytes, as GRAM_MAX_BYTES
    refuses a kernel matrix, instead of exhausting memory.  BudgetSVC counts
    its training store three times (``bsgd.solver.STORE_COPIES``: the store,
    the ``support_vectors_`` it publishes, and their transpose for products
    with sparse rows): on 300 rows of 10^6 features (20 non-zeros each),
    2 x 2.4 GB, it had taken 77 s and 12 GB.
GRAM_MAX_BYTES
    A callable kernel is evaluated once into the n x n kernel matrix of the
    training rows (as SVC does) by the solvers whose compiled loops look
    kernel values up (BudgetSVC, kernel PegasosSVC, MarginSGDSVC); a larger
    matrix is refused with a clear error instead of exhausting memory.
LEVERAGE_POOL_FACTOR, LEVERAGE_SKETCH_SIZE
    Approximate ridge leverage-score sampling scores a uniform pool of
    ``LEVERAGE_POOL_FACTOR * n_components`` rows against a uniform sketch of
    at most ``LEVERAGE_SKETCH_SIZE`` rows (its cost is pool x sketch^2).
"""

from ._cache import kernel_cache

KERNEL_CACHE = kernel_cache()
JIT_OPTIONS = dict(
    cache=KERNEL_CACHE,
    nogil=True,
    fastmath={"reassoc", "contract", "nsz", "arcp"},
)
CHUNK_STEPS = 20_000
MARGIN_SGD_BLOCK = 256
#: Products of fewer multiply-adds than this (BudgetSVC's and MarginSGDSVC's row blocks
#: against their support vectors) run with NumPy's BLAS at one thread (see
#: fastsvm._blas.serial_numpy_blas).
SERIAL_BLAS_BELOW = 2**27
#: NystromSVC's factorisations of matrices of at most this order (landmarks) run with
#: SciPy's BLAS at one thread (see fastsvm._blas.serial_lapack).
SERIAL_LAPACK_MAX_ORDER = 2000
MARGIN_SGD_DENSE_FROM = 0.05
MARGIN_SGD_DENSE_COPY_BYTES = 512 * 2**20
MARGIN_SGD_OFFSET_MIN_GAIN = 0.01
PREDICT_CHUNK_ROWS = 4096
PREDICT_CHUNK_BYTES = 256 * 2**20
DENSIFY_MIN_DENSITY = 0.05
DENSIFY_MAX_FEATURES = 4096
EMBED_CHUNK_BYTES = 64 * 2**20
EMBED_DTYPE = "float32"
NYSTROM_RTOL = 1e-7
RESORT_C = 10.0
PACKED_DENSE_FROM = 0.25
PREFIX_SUMS_MAX_BYTES = 512 * 2**20
SCALED_REFERENCE = True
GRAM_MAX_BYTES = 4 * 2**30
DENSE_VECTORS_MAX_BYTES = 4 * 2**30
LEVERAGE_POOL_FACTOR = 10
LEVERAGE_SKETCH_SIZE = 1000
