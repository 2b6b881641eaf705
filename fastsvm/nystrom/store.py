"""The training embedding within a memory budget: in memory, or in a mapped temporary file.

``NystromSVC`` solves its linear SVM on the n x r embedding of the training
rows.  When its size n * r * 4 bytes (float32) is within the budget
(``NystromSVC(max_embedding_mb=...)``) it is an array in the process's
memory.  Beyond it, it is written once, in row chunks, to an anonymous
temporary file (in ``tempfile.gettempdir()``, gone when the fit ends) and the
solvers read it through a memory map of that file: the same array to them,
so the same model, but its pages belong to the operating system's page
cache, which keeps what memory allows and drops (never swaps) the rest.  The
fit's own memory then no longer grows with n * r; the file needs that much
disk, and a pass of the solver is as fast as in memory while the file fits
in the page cache, and bound by the disk's random reads beyond.
"""

import os
import tempfile

import numpy as np

#: Share of the physical memory that ``max_embedding_mb='auto'`` gives the embedding.
AUTO_MEMORY_SHARE = 0.25


def auto_memory_budget():
    """``AUTO_MEMORY_SHARE`` of the physical memory in bytes (4 GiB where the system does
    not tell)."""
    try:
        return int(AUTO_MEMORY_SHARE * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 4 * 2**30


class EmbeddingStore:
    """Where the n x r training embedding is written, row chunk by row chunk.

    Parameters
    ----------
    n, r : int
        Rows and columns.
    dtype : numpy dtype
    max_bytes : int or None
        Memory budget: the embedding is an array in memory when n * r *
        itemsize is at most this (always when None), else a mapped file.

    Write the rows with :meth:`write`, then read :meth:`array` (an ndarray
    either way); :meth:`close` deletes the file.
    """

    def __init__(self, n, r, dtype=np.float32, max_bytes=None):
        self.shape = (n, r)
        self.dtype = np.dtype(dtype)
        self.nbytes = n * r * self.dtype.itemsize
        self.in_memory = max_bytes is None or self.nbytes <= max_bytes
        self._array = np.empty(self.shape, self.dtype) if self.in_memory else None
        self._file = (None if self.in_memory
                      else tempfile.TemporaryFile(prefix="fastsvm-embedding-"))

    def write(self, start, rows):
        """Store ``rows`` (cast to the store's type) as rows ``start``, ``start + 1``, ..."""
        if self.in_memory:
            self._array[start:start + len(rows)] = rows
            return
        view = memoryview(np.ascontiguousarray(rows, dtype=self.dtype)).cast("B")
        offset = start * self.shape[1] * self.dtype.itemsize
        while len(view):
            written = os.pwrite(self._file.fileno(), view, offset)
            view, offset = view[written:], offset + written

    def array(self):
        """The embedding as an ndarray (a view of the mapped file beyond the budget; the
        solvers never write to it)."""
        if self._array is None:   # 'r+' keeps the numba type (read-only arrays compile anew)
            self._array = np.memmap(self._file, dtype=self.dtype, mode="r+",
                                    shape=self.shape).view(np.ndarray)
        return self._array

    def close(self):
        """Unmap and delete the file (nothing to do in memory)."""
        if self._file is not None:
            self._array = None
            self._file.close()
            self._file = None
