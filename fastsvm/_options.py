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
"""

JIT_OPTIONS = dict(
    cache=True,
    nogil=True,
    fastmath={"reassoc", "contract", "nsz", "arcp"},
)
CHUNK_STEPS = 20_000
PREDICT_CHUNK_ROWS = 4096
