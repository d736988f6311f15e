"""A bounded load generator for a speech server on this computer (loopback only; stops by itself).

    python -m app.server.loadgen --url http://127.0.0.1:8000 --concurrency 1,8,32 --requests 64
    python -m app.server.loadgen --model DIR --concurrency 1,8,32 --requests 64 --soak 1000

With ``--model`` it starts ``voxdesk serve`` itself (a subprocess on a free port) and stops it at
the end. For each concurrency it sends ``--requests`` streamed requests from that many clients
and prints requests/s and time to first audio byte (p50/p95); ``--soak N`` then sends N more
from 8 clients and prints the server's RSS (and GPU memory on CUDA) every 500 requests
(``GET /health``). Each client reads its stream to the end, as a player would.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

from app.server.run import is_loopback

SOAK_SLICE = 500  # requests between two RSS samples of the soak


def _post(conn: http.client.HTTPConnection, body: bytes, key: str | None) -> tuple[float, float, int]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    t0 = time.perf_counter()
    conn.request("POST", "/v1/audio/speech", body=body, headers=headers)
    response = conn.getresponse()
    first = response.read1(65536) if response.status == 200 else response.read()
    t_first = time.perf_counter() - t0
    n = len(first)
    while response.status == 200:
        piece = response.read1(65536)
        if not piece:
            break
        n += len(piece)
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {first[:200]!r}")
    return t_first, time.perf_counter() - t0, n


def run_level(host: str, port: int, clients: int, total: int, body: dict, key: str | None) -> dict:
    """``total`` requests from ``clients`` threads; figures of this level."""
    counter = iter(range(total))
    lock = threading.Lock()
    firsts: list[float] = []
    errors: list[str] = []

    def client(i: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=300)
        while True:
            with lock:
                n = next(counter, None)
            if n is None:
                break
            payload = json.dumps({**body, "seed": n, "input": f"{body['input']} Number {n}."}).encode()
            try:
                t_first, _t_all, _ = _post(conn, payload, key)
            except Exception as exc:  # noqa: BLE001 - counted and reported, the run goes on
                with lock:
                    errors.append(str(exc))
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=300)
                continue
            with lock:
                firsts.append(t_first)
        conn.close()

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    firsts.sort()

    def pct(q: float) -> float:
        return firsts[min(len(firsts) - 1, int(q * len(firsts)))] * 1000 if firsts else float("nan")

    return {
        "clients": clients,
        "requests": len(firsts),
        "errors": len(errors),
        "req_per_s": len(firsts) / wall,
        "first_byte_p50_ms": statistics.median(firsts) * 1000 if firsts else float("nan"),
        "first_byte_p95_ms": pct(0.95),
    }


def _health(host: str, port: int) -> dict:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request("GET", "/health")
    data = json.loads(conn.getresponse().read())
    conn.close()
    return data


def soak(host: str, port: int, total: int, body: dict, key: str | None, quiet: bool) -> dict:
    """``total`` requests from 8 clients, the server's memory read every ``SOAK_SLICE`` of them:
    warm-up shows as growth in the first slices only, a leak as growth in every slice."""
    samples = [_health(host, port)]
    done = errors = 0
    while done < total:
        n = min(SOAK_SLICE, total - done)
        errors += run_level(host, port, 8, n, body, key)["errors"]
        done += n
        samples.append(_health(host, port))
        if not quiet:
            gpu = samples[-1].get("gpu_mb")
            gpu_text = f", GPU {gpu['allocated']} / {gpu['reserved']} MB allocated / reserved" if gpu else ""
            rss = samples[-1].get("rss_mb")
            print(f"soak: {done} requests, {errors} errors, server RSS {rss} MB{gpu_text}", flush=True)
    engine = samples[-1].get("engine", {})
    result = {
        "requests": done,
        "errors": errors,
        "rss_mb": [h.get("rss_mb") for h in samples],
        "gpu_mb": [h.get("gpu_mb") for h in samples],
        "kv_blocks_free_after": engine.get("kv_blocks_free"),
        "kv_blocks_total": engine.get("kv_blocks_total"),
    }
    if not quiet:
        print(f"soak: server RSS {result['rss_mb'][0]} MB before, {result['rss_mb'][-1]} MB after; KV blocks "
              f"free {result['kv_blocks_free_after']}/{result['kv_blocks_total']}", flush=True)  # fmt: skip
    return result


def _start_server(model: str, device: str) -> tuple[subprocess.Popen, int]:
    cmd = [sys.executable, "-m", "app.cli", "serve", "--model", model, "--port", "0", "--device", device]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()  # "VoxDesk speech server on http://127.0.0.1:PORT/v1 …"
    if "http://" not in line:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    port = int(line.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    return proc, port


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m app.server.loadgen", description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--url", help="a running server on this computer")
    src.add_argument("--model", help="start voxdesk serve on this model for the run")
    p.add_argument("--device", default="cpu")
    p.add_argument("--api-key")
    p.add_argument("--concurrency", default="1,8,32")
    p.add_argument("--requests", type=int, default=64, help="requests per concurrency level (max 10000)")
    p.add_argument("--patches", type=int, default=20, help="patches per request (fixed length)")
    p.add_argument("--soak", type=int, default=0, help="then this many more requests, RSS before/after")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if not 1 <= args.requests <= 10_000 or not 0 <= args.soak <= 100_000:
        p.error("--requests must be 1..10000 and --soak 0..100000")
    proc = None
    if args.model:
        proc, port = _start_server(args.model, args.device)
        host = "127.0.0.1"
    else:
        parts = urlsplit(args.url)
        host, port = parts.hostname or "", parts.port or 80
        if not is_loopback(host):
            p.error("the load generator only talks to a server on this computer (127.0.0.1)")
    body = {"model": "tts-1", "input": "Load test.", "voice": "default", "response_format": "pcm",
            "stream_format": "audio", "min_new_tokens": args.patches,
            "max_new_tokens": args.patches}  # fmt: skip
    results: dict = {"levels": []}
    try:
        run_level(host, port, 2, 4, body, args.api_key)  # warm-up
        for clients in (int(c) for c in args.concurrency.split(",")):
            level = run_level(host, port, clients, args.requests, body, args.api_key)
            results["levels"].append(level)
            if not args.json:
                print(f"{clients:>3} clients: {level['requests']} requests, {level['errors']} errors, "
                      f"{level['req_per_s']:.1f} req/s, first byte p50 {level['first_byte_p50_ms']:.1f} ms, "
                      f"p95 {level['first_byte_p95_ms']:.1f} ms", flush=True)  # fmt: skip
        if args.soak:
            results["soak"] = soak(host, port, args.soak, body, args.api_key, quiet=args.json)
        if args.json:
            print(json.dumps(results, indent=2))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
