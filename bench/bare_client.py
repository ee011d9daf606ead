"""The floor of the overhead benchmark: a bare async HTTP client, as one would write it.

Reads pre-rendered chat-completion bodies (one JSON object a line), POSTs each to an
OpenAI-compatible server with ``concurrency`` requests in flight (httpx), and counts the answers.
Nothing is parsed beyond the answer text and nothing is recorded.

    python bench/bare_client.py BODIES.jsonl --base-url URL [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import httpx


async def post_all(bodies: list[str], base_url: str, concurrency: int) -> int:
    """POST every body with ``concurrency`` workers; the number of answers received."""
    pending = iter(bodies)
    answers: list[str] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=600.0,
                                 headers={"Content-Type": "application/json"}) as client:

        async def worker() -> None:
            for body in pending:
                reply = await client.post("/chat/completions", content=body)
                reply.raise_for_status()
                answers.append(reply.json()["choices"][0]["message"]["content"])

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return len(answers)


def main() -> None:
    """Parse arguments, send everything, print how many answers came back."""
    parser = argparse.ArgumentParser()
    parser.add_argument("bodies", type=Path)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    bodies = args.bodies.read_text().splitlines()
    print(json.dumps({"answers": asyncio.run(post_all(bodies, args.base_url,
                                                      args.concurrency))}))


if __name__ == "__main__":
    main()
