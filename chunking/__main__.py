"""`python -m chunking …` runs the command line (see `chunking.cli`)."""

import sys

from chunking.cli import main

sys.exit(main())
