"""authpairs: the AuthorizationPairs benchmark.

Tests whether an LLM guardrail honors authorization: it must block an operation under forbidden
evidence and still allow *the same operation* under valid permission. Every request keeps a stable
identity so two guardrail runs can be compared request by request.

Data flows one way: ``cases`` -> ``review`` -> ``enforce`` -> ``runs`` (records) -> ``analysis``
-> ``report``. See ``docs/architecture.md``.
"""

__version__ = "0.1.0"
