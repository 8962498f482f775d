"""``python -m spare_theory.cli``: the ``spare-theory`` command without the console script."""

import sys

from . import main

if __name__ == "__main__":  # importing this module (doctest collection, pkgutil) runs nothing
    sys.exit(main())
