"""Old module paths of conformance/ (from before its subpackages), kept so that every command,
import and reproducer line already printed in reports, docs and users' scripts still works
(`from ggspec.conformance.replay import replay; from ggspec.conformance.strategies import *`,
`python -m ggspec.conformance.trace`). Each old module is one line: `alias(__name__, "new.path")`.
"""

from __future__ import annotations

import importlib
import sys


def alias(name: str, new: str) -> None:
    """Make the old module `name` the module `ggspec.conformance.<new>` itself (same objects,
    so that monkeypatching either name patches both); run as a script, run the new one's main."""
    module = importlib.import_module(f"{__package__}.{new}")
    if name == "__main__":
        raise SystemExit(module.main())
    sys.modules[name] = module
