"""The checks, one module per API area (the same names as reference/ and native/src/).

Each module registers scenarios with `@check(clause IDs..., arg=strategy, ...)`. A scenario calls
the API through the Target protocol and records what it sees with `rec(label, value)`; handles
are never recorded, only values the two sides can share (names, sizes, bytes, flags,
`TensorInfo`). Behaviour checks draw valid calls; assert checks draw calls that break exactly
their clause, so a defect is blamed on the clause it breaks.
"""
