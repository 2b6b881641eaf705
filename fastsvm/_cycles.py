"""A cycle counter readable from compiled code, for the paper's timing instruments.

``time.perf_counter`` cannot be called from numba's nopython mode, and a
system call per merge event would distort what it measures.  LLVM's
``readcyclecounter`` intrinsic reads the CPU's time-stamp counter in a few
cycles (``rdtsc`` on x86-64, the virtual counter on AArch64).  It ticks at a
constant rate on current CPUs; :func:`ticks_per_second` calibrates it against
``time.perf_counter`` once per process.  On a platform without such a counter
LLVM returns 0, and the timings read as zero.
"""

import functools
import time

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ._options import KERNEL_CACHE


@intrinsic
def read_cycle_counter(typingctx):
    """Current value of the CPU cycle counter (int64), usable inside ``@njit``."""
    sig = types.int64()

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return sig, codegen


@njit(cache=KERNEL_CACHE)
def _now():
    return read_cycle_counter()


@functools.lru_cache(maxsize=None)
def ticks_per_second():
    """Counter ticks per second, measured over 50 ms; 0.0 when there is no counter."""
    _now()  # compile before measuring
    t0, c0 = time.perf_counter(), _now()
    while time.perf_counter() - t0 < 0.05:
        pass
    t1, c1 = time.perf_counter(), _now()
    return max(c1 - c0, 0) / (t1 - t0)
