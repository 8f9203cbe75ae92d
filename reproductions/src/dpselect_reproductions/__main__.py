"""``python -m dpselect_reproductions NAME``: the reproductions' command line (see :func:`main`)."""
import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
