"""Where numba caches fastsvm's compiled kernels (``cache=True``), decided once at import.

numba writes the machine code of a ``cache=True`` function to the first
writable folder of: ``NUMBA_CACHE_DIR``, the ``__pycache__`` folder beside
the source file, the user's cache folder (``~/.cache/numba``).  Where none
is writable (a read-only install run by a service user whose home is not
writable, as in many containers) numba raised at the decorator, so
``from fastsvm import BudgetSVC`` failed ("cannot cache function ...: no
locator available").  :func:`kernel_cache` then points numba at a folder of
this user's under the system's temporary folder, and where even that cannot
be made, compiles without a cache (every process pays the compilation) and
says so once.
"""

import os
import tempfile
import warnings


def _writable(folder):
    """Whether ``folder`` exists or can be made, and files can be written in it."""
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def _user_cache_folder():
    """numba's user-wide cache folder (``~/.cache/numba`` on Linux)."""
    try:
        from numba.misc.appdirs import AppDirs
    except ImportError:     # numba moved it: the XDG default
        return os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                            "numba")
    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def choose_cache(configured, package, user, temporary):
    """(cache, folder): whether to cache, and a folder numba must be pointed at (None: it
    finds one itself).  ``configured`` is NUMBA_CACHE_DIR ('' if unset), ``package`` the
    package's folder, ``user`` numba's user-wide cache folder, ``temporary`` the fallback."""
    if any(folder and _writable(folder) for folder in (configured, package, user)):
        return True, None
    if _writable(temporary):
        return True, temporary
    return False, None


def kernel_cache():
    """Whether the compiled kernels are cached (``cache=`` of every ``njit``); points numba
    at a temporary folder where none of its own is writable (see the module docstring)."""
    from numba.core import config

    package = os.path.dirname(os.path.abspath(__file__))
    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    temporary = os.path.join(tempfile.gettempdir(), f"fastsvm-numba-cache-{uid}")
    cache, folder = choose_cache(config.CACHE_DIR, package, _user_cache_folder(), temporary)
    if folder is not None:
        config.CACHE_DIR = folder
    if not cache:
        warnings.warn("fastsvm: no writable folder for numba's cache (NUMBA_CACHE_DIR, the "
                      f"package's folder {package}, the user's cache folder, {temporary}): the "
                      "kernels are compiled in every process; set NUMBA_CACHE_DIR to a writable "
                      "folder", RuntimeWarning, stacklevel=2)
    return cache
