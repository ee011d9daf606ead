"""Effect executors: one function per effect type (the built-ins in :mod:`.built_in`), each
performing the real local operation.

An executor receives validated parameters (:mod:`authpairs.cases.effect_params`) and an
:class:`ExecContext` (the read-write database connection, the sandbox root and the case scope),
performs the operation and returns a small JSON description of what it did. It raises
:class:`ExecutionError` when the sandbox refuses the operation (insufficient funds, an existing
order, an overlapping reservation). Verifiers never import this package.
"""
