"""``python -m dpselect``: the command line (see :mod:`dpselect.cli`)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
