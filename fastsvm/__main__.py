"""``python -m fastsvm``: the ``fastsvm`` command line (see :mod:`fastsvm.cli`)."""

import sys

from fastsvm.cli import main

if __name__ == "__main__":
    sys.exit(main())
