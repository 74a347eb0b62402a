"""ggspec's conformance suite: adapters, strategies, checks, the runner and the report.

`ggspec check` (conformance.cli) runs every check against one target and prints a per-clause
table. Checks are plain scenario functions over the `Target` protocol (target.py); the runner
(runner.py) runs them through hypothesis, on the reference and on the target, in forked workers
so that a crashing target costs one verdict, not the run.
"""
