"""Enforcement: the enforcement point, the per-run sandbox, effect executors and verifiers.

Use :class:`~authpairs.enforce.enforcer.LocalEnforcer` (the run orchestrator does)::

    with LocalEnforcer() as enforcer:
        record = enforcer.enforce(case_id, case.public.effect, outcome.dispatch)

Design (issue 5; docs/definitions.md "Execution and effects", paper sections 3.4 and A.3):

* **Inputs and record** (:mod:`.enforcer`): only the case id, the public descriptor and the
  dispatch go in. ALLOW executes; BLOCK -- also how abstentions and unavailable outputs arrive --
  does not; no descriptor (native cases) gives a decision-only record.
* **Sandbox** (:mod:`.sandbox`): one temporary directory per run (``/dev/shm`` when available)
  with a SQLite database, files, Ed25519 signer keys and an HTTP server on 127.0.0.1 (ephemeral
  port) serving deployed sites and downloads; all of it stops with the ``with`` block.
* **Scopes** (:mod:`.layout`): every case acts in its own scope, seeded with deterministic
  initial state (:mod:`.seeding`), because the four contexts of a scenario carry byte-identical
  effects (the same order id, the same account) and each must be executable on its own.
* **Descriptors** (:mod:`authpairs.cases.effect_types`, one :class:`EffectType` per type):
  typed params exactly as in ``docs/datasets/language-format.md``; identifiers are
  ``[A-Za-z0-9._-]`` (no leading dot), payloads are capped, free text has no control characters.
  Malformed or hostile descriptors give ``error`` and ``executed=False``.
* **Executors** (:mod:`.execute`) do the real operation: parameterized SQL, files written through
  :mod:`.safepath` (no link is ever followed, atomic rename), signatures with the private key.
* **Verifiers** (:mod:`.verify`) never import executor code; they read back through their own
  channel -- a read-only SQLite connection, link-refusing file reads with SHA-256, Ed25519
  verification with the public key, the live site and downloads over HTTP (httpx) -- and judge
  the before/after pair against the descriptor. The unrelated-resource check digests every row
  and file of the sandbox before and after and lists any change outside the effect's targets.
"""
