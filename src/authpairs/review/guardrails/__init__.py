"""Guardrails as reviewers: native guardrail formats and guardrails that users bring.

* Native formats (one module each): ``safeguard`` (Harmony), ``granite-guardian``, ``policyguard``,
  ``qwen3guard``, ``nemotron-safety``, ``llama-guard`` -- :class:`ReviewInterface` subclasses
  registered in :data:`authpairs.review.interfaces.INTERFACES`.
* ``nemo-self-check`` -- the real NeMo Guardrails ``self_check_input`` action (:mod:`.nemo`).
* Bring your own: a Python callable (:mod:`.pycallable`), an HTTP service (:mod:`.http_service`),
  or a plugin registered through the ``authpairs.guardrails`` entry-point group (:mod:`.registry`).
"""
