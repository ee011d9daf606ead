"""The permission-expression language: grammar, AST and two independent evaluators.

* :mod:`.parser` -- lark grammar and transformation into the AST of :mod:`.ast`.
* :mod:`.interpreter` -- evaluator 1, a tree-walking interpreter with Kleene logic.
* :mod:`.sqlite_eval` -- evaluator 2, compiles the AST to SQL and runs it in SQLite.
* :mod:`.result` -- the shared result type (``true`` / ``false`` / ``unresolved`` / ``error``).
"""
