"""`python -m ggspec.conformance` is the `ggspec` command."""

import sys

from .tools.cli import main

sys.exit(main())
