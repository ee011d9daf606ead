"""Preflight: every configured endpoint is checked once, before the first case.

A run against a server that is not running, a wrong base URL, a wrong API key or a model the
server does not serve would otherwise fail case by case. Before any case is reviewed and before
the records file is opened, each component that talks to a server is asked to check it
(:func:`authpairs.backends.base.preflight`): it has a ``preflight()`` coroutine that raises
:class:`PreflightError` naming the endpoint, what failed and what to do.

What is checked, per endpoint:

* an OpenAI-compatible server (:func:`check_models_endpoint`): ``GET {base_url}/models`` answers,
  and lists the configured model (the error lists what it serves when it does not);
* the embedded server: it started and answers its models endpoint;
* an HTTP guardrail (:func:`check_reachable`): its URL answers at all (any HTTP status but 401,
  403 and 404; a POST-only service answers 405 to the check, which is fine).

``--no-preflight`` (``preflight: false``) skips the check, for servers without a models
endpoint; the run's circuit breakers (:mod:`authpairs.backends.breaker`) still stop a run whose
endpoint fails every request.
"""

from __future__ import annotations

import httpx

from authpairs.backends.breaker import connection_cause
from authpairs.errors import BackendError

#: How long one preflight request may take.
PREFLIGHT_TIMEOUT_S = 10.0

NO_PREFLIGHT = "pass --no-preflight (preflight: false) for a server without a models endpoint"


class PreflightError(BackendError):
    """An endpoint failed its check before the run started: nothing was reviewed or recorded."""

    hint = "start the server or correct its address, then run the same command again"


async def _get(client: httpx.AsyncClient, url: str, endpoint: str) -> httpx.Response:
    """GET ``url``; a failure to connect, a timeout or a refused key (HTTP 401/403) is a
    :class:`PreflightError`."""
    try:
        reply = await client.get(url, timeout=PREFLIGHT_TIMEOUT_S)
    except httpx.TimeoutException:
        raise PreflightError(f"{endpoint}: no answer to the preflight check (GET {url}) within "
                             f"{PREFLIGHT_TIMEOUT_S:g} s",
                             hint=f"check that the server is up and not overloaded, or "
                             f"{NO_PREFLIGHT}") from None
    except httpx.TransportError as exc:
        cause = connection_cause(exc) or f"{type(exc).__name__}: {exc}"
        raise PreflightError(f"{endpoint}: {cause}",
                             hint="start the server, or correct its URL (--base-url; for the "
                             "agent's model --agent)") from None
    if reply.status_code in (401, 403):
        raise PreflightError(f"{endpoint}: HTTP {reply.status_code}: the server refused the "
                             "request's credentials", hint="set the API key's environment "
                             "variable (api_key_env; a backend's default is OPENAI_API_KEY)")
    return reply


async def check_models_endpoint(client: httpx.AsyncClient, base_url: str,
                                model: str | None) -> list[str]:
    """Check an OpenAI-compatible ``base_url``: its models endpoint answers and, when ``model``
    is given, lists it. Returns what the server says that model is: its id and, where the server
    names it (vLLM's ``root``), the path it was loaded from (empty without ``model``)."""
    url = f"{base_url}/models"
    reply = await _get(client, url, base_url)
    if reply.status_code == 404:
        raise PreflightError(f"{url}: HTTP 404: no models endpoint at this base URL",
                             hint="check the base URL (an OpenAI-compatible one usually ends in "
                             f"/v1), or {NO_PREFLIGHT}")
    if reply.status_code >= 400:
        raise PreflightError(f"{url}: HTTP {reply.status_code}: {reply.text[:200]}",
                             hint=f"check the server's log, or {NO_PREFLIGHT}")
    try:
        body = reply.json()
    except ValueError:
        body = None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise PreflightError(f"{url}: the reply does not list models (no 'data' list)",
                             hint=NO_PREFLIGHT)
    entries = [e for e in data if isinstance(e, dict) and isinstance(e.get("id"), str)]
    ids = [entry["id"] for entry in entries]
    if model is not None and model not in ids:
        served = ", ".join(repr(name) for name in ids[:10]) or "no model"
        more = f" and {len(ids) - 10} more" if len(ids) > 10 else ""
        raise PreflightError(f"{base_url} does not serve model '{model}'; it serves {served}"
                             f"{more}", hint="pass --model with a served name (for the agent: "
                             "--agent-model)")
    if model is None:
        return []
    root = next(entry for entry in entries if entry["id"] == model).get("root")
    return [model, root] if isinstance(root, str) and root and root != model else [model]


async def check_reachable(client: httpx.AsyncClient, url: str) -> None:
    """Check that ``url`` answers at all: any HTTP status passes but 401/403 (credentials) and
    404 (no such path)."""
    reply = await _get(client, url, url)
    if reply.status_code == 404:
        raise PreflightError(f"{url}: HTTP 404: nothing at this path",
                             hint="correct the guardrail's url option")


__all__ = ["PREFLIGHT_TIMEOUT_S", "PreflightError", "check_models_endpoint", "check_reachable"]
