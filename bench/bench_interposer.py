"""Benchmark: a loopback HTTP server with keep-alive, direct vs through the interposer (no toxics).

Prints: added latency p50/p99 per request, throughput ratio (sequential and with concurrent connections),
interposer RSS before/after N requests (default 100k). The server (uvicorn, plain ASGI app) and the
interposer (`python -m ctk interposer`) run in their own processes; the client is http.client.

    python bench/bench_interposer.py [--latency-requests 5000] [--requests 100000] [--threads 4]
                                     [--loop auto|asyncio|uvloop] [--server-loop auto|asyncio|uvloop]

Targets: added p50 <= 0.3 ms, throughput >= 70% of direct, RSS flat.

Throughput is measured twice. With the Python client (threads of http.client), the client itself needs about
a core on this 2-core machine, so client, server and interposer share two cores, and the ratio says as much
about that sharing as about the interposer. With wrk (Debian's package; skipped with a note when absent) as
the load, the client is cheap and the ratio is the interposer's own cost; the upstream server's CPU per
request is printed for both paths.

Both sides pick their event loop as they do by default (uvicorn: uvloop when installed; the interposer: the
same, see ctk/interposer/loops.py); the first line printed says which. --loop / --server-loop force one side.
"""

from __future__ import annotations

import argparse
import http.client
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))  # tests/procs.py
import procs  # noqa: E402

SERVER = r"""
import socket, sys, uvicorn
BODY = b'{"ok": true, "namespace": ["bench"], "properties": {"owner": "ctk"}}'
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while True:
        m = await receive()
        if not m.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(BODY)).encode())]})
    await send({"type": "http.response.body", "body": BODY})
# a port of its own (bound to 0 here, said on stdout once it listens): no port probed free can be taken meanwhile
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
sock.bind(("127.0.0.1", 0))
sock.listen(2048)
print(f"listening on {sock.getsockname()[1]}", flush=True)
config = uvicorn.Config(app, log_level="warning", access_log=False, loop=sys.argv[1])
uvicorn.Server(config).run(sockets=[sock])
"""
LISTENING = r"^listening on (?P<port>\d+)$"


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


BODY = b'{"namespace": ["bench"], "properties": {"k": "v"}}'


def one_conn_latencies(port: int, n: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    out = []
    hdrs = {"Content-Type": "application/json", "Idempotency-Key": "0190a6b2-0000-7000-8000-000000000000"}
    for i in range(n):
        t0 = time.perf_counter()
        if i % 2:
            conn.request("POST", "/v1/namespaces", body=BODY, headers=hdrs)
        else:
            conn.request("GET", "/v1/namespaces/bench")
        r = conn.getresponse()
        r.read()
        out.append(time.perf_counter() - t0)
        if r.status != 200:
            raise RuntimeError(f"status {r.status}")
    conn.close()
    return out


def throughput(port: int, total: int, threads: int) -> float:
    per = total // threads
    errors: list[BaseException] = []

    def work():
        try:
            one_conn_latencies(port, per)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    ts = [threading.Thread(target=work) for _ in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join(600)
    took = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return per * threads / took


WRK_SCRIPT = """
local n = 0
request = function()
  n = n + 1
  if n % 2 == 1 then
    return wrk.format("POST", "/v1/namespaces", {["Content-Type"] = "application/json",
      ["Idempotency-Key"] = "0190a6b2-0000-7000-8000-000000000000"}, '@BODY@')
  end
  return wrk.format("GET", "/v1/namespaces/bench")
end
""".replace("@BODY@", BODY.decode())


def wrk_rate(port: int, conns: int, seconds: float, script: str, pids: tuple[int, ...]) -> tuple[float, list[float]]:
    """Requests/s wrk (C, one thread) reached on `port` with `conns` keep-alive connections, the same POST/GET
    mix as the Python client; and the CPU per request of each process in pids."""
    c0 = [cpu_seconds(p) for p in pids]
    out = subprocess.run(["wrk", "-t1", f"-c{conns}", f"-d{seconds:g}s", "-s", script, f"http://127.0.0.1:{port}/"],
                         capture_output=True, text=True, timeout=seconds + 60)
    found = re.search(r"Requests/sec:\s+([\d.]+)", out.stdout)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", out.stdout)
    if out.returncode != 0 or not found or errors:
        raise RuntimeError(f"wrk failed (exit {out.returncode}): {out.stdout[-400:]} {out.stderr[-400:]}")
    rate = float(found.group(1))
    total = rate * seconds
    return rate, [(cpu_seconds(p) - c) / total for p, c in zip(pids, c0)]


def wrk_rounds(sport: int, pport: int, pids: tuple[int, int], conns: int, rounds: int, seconds: float) -> None:
    """Direct and through the interposer, alternated, with wrk as the load: the client costs ~1/10 of the
    Python one, so the figure is what the interposer costs, not how three processes share two cores."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(WRK_SCRIPT)
    try:
        wrk_rate(pport, conns, 1, f.name, pids)                      # warm-up
        ratios, direct_cpu, via_cpu = [], [], []
        for _ in range(rounds):
            d, dc = wrk_rate(sport, conns, seconds, f.name, pids)
            v, vc = wrk_rate(pport, conns, seconds, f.name, pids)
            ratios.append(v / d)
            direct_cpu.append(dc[1])
            via_cpu.append(vc[1])
        note = ("one request at a time: bound by the added latency, not by throughput" if conns == 1
                else "target >= 70%")
        print(f"throughput with wrk as the load, {conns} connection{'s' if conns > 1 else ''}, {rounds} alternated "
              f"rounds of {seconds:g} s: median ratio {statistics.median(ratios) * 100:.1f}% (rounds: "
              f"{', '.join(f'{r * 100:.0f}%' for r in ratios)})  ({note})")
        print(f"  upstream server CPU per request: direct {statistics.median(direct_cpu) * 1e6:.0f} us, "
              f"through the interposer {statistics.median(via_cpu) * 1e6:.0f} us")
    finally:
        os.unlink(f.name)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency-requests", type=int, default=5000)
    ap.add_argument("--throughput-requests", type=int, default=10000)
    ap.add_argument("--requests", type=int, default=100_000, help="requests for the memory run")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5,
                    help="extra figure: direct and interposer measured alternately this many times (half the "
                    "throughput requests each), median ratio (0: skip)")
    ap.add_argument("--wrk-connections", type=int, nargs="*", default=[1, 4],
                    help="connection counts for the wrk figure (wrk from Debian's package, when installed)")
    ap.add_argument("--wrk-rounds", type=int, default=5)
    ap.add_argument("--wrk-seconds", type=float, default=3.0)
    ap.add_argument("--loop", choices=("auto", "asyncio", "uvloop"), default="auto",
                    help="the interposer's event loop (default: its own choice, uvloop when installed)")
    ap.add_argument("--server-loop", choices=("auto", "asyncio", "uvloop"), default="auto",
                    help="uvicorn's event loop for the upstream server (default: uvicorn's, uvloop when installed)")
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from ctk.interposer import loops

    has_uvloop = importlib.util.find_spec("uvloop") is not None
    server_loop = args.server_loop if args.server_loop != "auto" else ("uvloop" if has_uvloop else "asyncio")
    print(f"event loops: upstream server (uvicorn) {server_loop}, interposer {loops.resolve(args.loop)}")

    # both bind port 0 and say which port they got (tests/procs.py): no port probed free can be taken meanwhile
    server = procs.start([sys.executable, "-c", SERVER, args.server_loop], {"port": LISTENING})
    sport = int(server.found["port"]["port"])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.pathsep + env.get("PYTHONPATH", "")
    try:
        proxy = procs.interposer(f"127.0.0.1:{sport}", "--loop", args.loop, api=False, env=env)
    except BaseException:
        server.stop()
        raise
    pport = proxy.listen[1]
    try:
        # warm up both paths
        one_conn_latencies(sport, 500)
        one_conn_latencies(pport, 500)

        # latency: interleaved blocks, one keep-alive connection each
        direct: list[float] = []
        via: list[float] = []
        block = 500
        for _ in range(max(1, args.latency_requests // block)):
            direct += one_conn_latencies(sport, block)
            via += one_conn_latencies(pport, block)
        d50, d99 = pct(direct, 0.5), pct(direct, 0.99)
        v50, v99 = pct(via, 0.5), pct(via, 0.99)
        print(f"requests per path (latency): {len(direct)}")
        print(f"direct      p50 {d50 * 1e3:.3f} ms  p99 {d99 * 1e3:.3f} ms")
        print(f"interposer  p50 {v50 * 1e3:.3f} ms  p99 {v99 * 1e3:.3f} ms")
        print(f"added       p50 {(v50 - d50) * 1e3:.3f} ms  p99 {(v99 - d99) * 1e3:.3f} ms  (target p50 <= 0.300)")
        seq_ratio = statistics.mean(direct) / statistics.mean(via)
        print(f"throughput ratio, 1 connection (sequential): {seq_ratio * 100:.1f}%")

        td = throughput(sport, args.throughput_requests, args.threads)
        tv = throughput(pport, args.throughput_requests, args.threads)
        print(f"throughput, {args.threads} connections: direct {td:.0f} req/s, interposer {tv:.0f} req/s, "
              f"ratio {tv / td * 100:.1f}%  (target >= 70%)")
        if args.rounds > 0:
            # the same measurement, alternated: a slower or faster spell of the machine hits both sides
            ratios = []
            for _ in range(args.rounds):
                d = throughput(sport, args.throughput_requests // 2, args.threads)
                v = throughput(pport, args.throughput_requests // 2, args.threads)
                ratios.append(v / d)
            print(f"throughput, {args.threads} connections, {args.rounds} alternated rounds: median ratio "
                  f"{statistics.median(ratios) * 100:.1f}% (rounds: {', '.join(f'{r * 100:.0f}%' for r in ratios)})")

        if shutil.which("wrk"):
            for conns in args.wrk_connections:
                wrk_rounds(sport, pport, (proxy.pid, server.pid), conns, args.wrk_rounds, args.wrk_seconds)
        else:
            print("wrk not installed (Debian: apt-get install wrk): no figure with a native load generator")

        before = rss_kb(proxy.pid)
        cpu0, scpu0 = cpu_seconds(proxy.pid), cpu_seconds(server.pid)
        t0 = time.perf_counter()
        throughput(pport, args.requests, args.threads)
        mid = rss_kb(proxy.pid)
        took = time.perf_counter() - t0
        cpu = cpu_seconds(proxy.pid) - cpu0
        scpu = cpu_seconds(server.pid) - scpu0
        print(f"memory run: {args.requests} requests through the interposer in {took:.1f} s")
        print(f"CPU per request: interposer {cpu / args.requests * 1e6:.0f} us, "
              f"upstream server {scpu / args.requests * 1e6:.0f} us (load-independent cost)")
        print(f"interposer RSS before {before / 1024:.1f} MiB, after {mid / 1024:.1f} MiB, "
              f"delta {(mid - before) / 1024:+.1f} MiB")
    finally:
        for p in (proxy, server):
            p.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
