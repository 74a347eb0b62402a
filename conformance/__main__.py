"""`python -m ggspec.conformance` is the `ggspec` command."""

import sys

from .cli import main

sys.exit(main())
