"""One httpx client against authpairs' pool of small clients, many requests in flight.

httpx's connection pool re-examines every connection on each request event, so one client's CPU
per request grows with the number of requests in flight; :class:`authpairs.backends.connections.
ClientPool` spreads them over clients of ``CONNECTIONS_PER_CLIENT`` connections. Both POST the
same 2,000 pre-rendered bodies to the local stub (``bench/openai_stub.py``, pinned to the last
CPU), at each latency and number in flight, in one process each (the variants alternating):

* ``one client`` -- ``httpx.AsyncClient`` with as many connections as requests in flight, as in
  ``bench/bare_client.py``;
* ``pool of N`` -- the same requests through ``ClientPool(per_client=N)``, for each N of
  ``--per-client`` (authpairs uses ``CONNECTIONS_PER_CLIENT``).

Fewer connections per client cost less CPU per request, which decides a run that is CPU-bound
(many in flight, a fast server). With a server whose every answer takes exactly 50 ms and 16 in
flight, one large client answers each request a little sooner: requests that left together come
back together and leave together again, each waiting in the event loop behind the others, and a
client that spends more CPU on each request (one large httpx pool) spreads them apart.
``--jitters 0,0.1`` also runs each non-zero latency with the stub's waits drawn from +-10% of it
(``openai_stub.py --jitter``), as a model's answer times vary: there the sizes answer alike.
``CONNECTIONS_PER_CLIENT`` is chosen from all of these.

    python bench/bench_http_clients.py [--latencies 50,0] [--jitters 0] [--in-flight 16,64]
        [--repeat 3] [--per-client 4,8,16] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_overhead import recorded_command, start_stub, write_inputs  # noqa: E402


async def _send(bodies: list[str], base_url: str, in_flight: int, variant: str) -> int:
    from authpairs.backends.connections import ClientPool

    per_client = int(variant.removeprefix("pool of ")) if variant != "one client" else 1
    pending = iter(bodies)
    answers = 0
    options = {"base_url": base_url, "timeout": 600.0,
               "headers": {"Content-Type": "application/json"}}
    pool = ClientPool(tls=False, per_client=per_client, **options)
    single = httpx.AsyncClient(limits=httpx.Limits(max_connections=in_flight,
                                                   max_keepalive_connections=in_flight),
                               **options)  # type: ignore[arg-type]

    async def worker() -> None:
        nonlocal answers
        for body in pending:
            if variant == "one client":
                reply = await single.post("/chat/completions", content=body)
            else:
                async with pool.client() as client:
                    reply = await client.post("/chat/completions", content=body)
            reply.raise_for_status()
            reply.json()
            answers += 1

    try:
        await asyncio.gather(*(worker() for _ in range(in_flight)))
    finally:
        await single.aclose()
        await pool.aclose()
    return answers


def _child(bodies_path: str, base_url: str, in_flight: int, variant: str) -> None:
    bodies = Path(bodies_path).read_text().splitlines()
    wall, cpu = time.perf_counter(), time.process_time()
    answers = asyncio.run(_send(bodies, base_url, in_flight, variant))
    print(json.dumps({"answers": answers, "wall_s": time.perf_counter() - wall,
                      "cpu_s": time.process_time() - cpu}))


def _wait(latency: float, jitter: float) -> str:
    """How long the stub waits, as the table names it (e.g. ``50 ms +-10%``)."""
    return f"{latency:g} ms" + (f" +-{jitter:.0%}" if jitter else "")


def main() -> None:
    """Parse arguments, time every variant, print a Markdown table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--latencies", default="50,0")
    parser.add_argument("--jitters", default="0")
    parser.add_argument("--in-flight", default="16,64")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--per-client", default="4,8,16")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]), args.child[3])
        return
    variants = ["one client", *(f"pool of {n}" for n in args.per_client.split(",") if n)]
    rows = []
    with tempfile.TemporaryDirectory() as name:
        _, bodies = write_inputs(Path(name), args.cases)
        jitters = [float(x) for x in args.jitters.split(",") if x]
        latencies = [float(x) for x in args.latencies.split(",") if x]
        for latency, jitter in [(ms, j) for ms in latencies for j in (jitters if ms else [0.0])]:
            stub, url = start_stub(latency, jitter)
            wait = _wait(latency, jitter)
            try:
                for in_flight in [int(x) for x in args.in_flight.split(",") if x]:
                    for _ in range(args.repeat):
                        for variant in variants:
                            out = subprocess.run(
                                [sys.executable, __file__, "--child", str(bodies), url,
                                 str(in_flight), variant],
                                check=True, capture_output=True, text=True).stdout
                            result = json.loads(out.strip().splitlines()[-1])
                            assert result["answers"] == args.cases
                            rows.append((latency, jitter, in_flight, variant,
                                         result["wall_s"], result["cpu_s"]))
                            print(f"{wait:>12} {in_flight:>3} in flight {variant:<12} "
                                  f"{result['wall_s']:6.2f} s wall {result['cpu_s']:6.2f} s CPU",
                                  flush=True)
            finally:
                stub.terminate()
                stub.wait()
    lines = ["| stub latency | in flight | variant | median wall (s) | median CPU (s) |",
             "|---|---|---|---|---|"]
    for key in sorted({r[:3] for r in rows}, key=lambda k: (-k[0], k[1], k[2])):
        for variant in variants:
            mine = [r for r in rows if r[:3] == key and r[3] == variant]
            lines.append(f"| {_wait(key[0], key[1])} | {key[2]} | {variant} | "
                         f"{statistics.median(r[4] for r in mine):.2f} | "
                         f"{statistics.median(r[5] for r in mine):.2f} |")
    load = "/".join(f"{v:.1f}" for v in os.getloadavg())
    table = "\n".join(lines)
    print(f"\n{table}\n\nLoad average {load} on {os.cpu_count()} CPUs; {args.cases:,} requests "
          "each.")
    if args.write:
        from authpairs.backends.connections import CONNECTIONS_PER_CLIENT

        stamp = datetime.now(UTC).date().isoformat()
        command = recorded_command()
        (HERE / "results" / "http_clients.md").write_text(
            f"## HTTP clients ({stamp}, {os.cpu_count()} CPUs, {args.cases:,} requests, "
            f"{args.repeat} rounds)\n\n`python bench/bench_http_clients.py {command}` (one "
            f"process per variant, stub pinned to the last CPU; load average {load} at the "
            f"end). authpairs' clients carry {CONNECTIONS_PER_CLIENT} connections each "
            f"(`CONNECTIONS_PER_CLIENT`).\n\n{table}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
