"""The kit's speed goals, each figure printed next to its goal, all measured in one run (so a loaded machine
weighs on every figure alike; the load average is printed with each). Never an assertion: figures only.

1. `ctk run` against the embedded reference catalog, no Spark            goal < 30 s
2. `pytest --catalog-url` against a plain `ctk serve` (no control API)    goal < 30 s
   (one process, as pytest runs by default; and with --workers 3, as `ctk run` runs)
   and the cost of the catalog-semantics family: `ctk run` now vs before it      goal <= 1.25 x
3. the main job with Spark (`ctk run --ctk-spark`, as `nox -s kit`)      goal < 120 s
4. the reference catalog (`ctk serve` in its own process, updateTable set-properties commits over HTTP):
   one writer >= 300 commits/s; 4 writers (one table each) at least as fast as one; no 5xx;
   Idempotency-Key overhead <= 10 % (median latency, keyed and plain commits alternated one by one).

    python bench/bench_goals.py [--no-spark] [--only run,plain,spark,reference] [--commits 400]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

ROWS: list[tuple[str, str, str, bool | None, str]] = []   # (figure, measured, goal, met, note)


def row(figure: str, measured: str, goal: str, met: bool | None, note: str = "") -> None:
    ROWS.append((figure, measured, goal, met, note))
    mark = {True: "met", False: "NOT met", None: "-"}[met]
    print(f"  {figure:<44} {measured:>14}   goal {goal:<22} {mark:<8} {note}", flush=True)


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def ctk_run(*extra: str, source: str | None = None) -> tuple[float, int, dict]:
    """`ctk run` in a fresh directory; ``source``: a checkout of another version of the kit to run instead."""
    cwd = tempfile.mkdtemp(prefix="ctk-goals-")
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = source + os.pathsep + env.get("PYTHONPATH", "")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ctk", "run", "--ctk-reports", "reports", *extra],
                          cwd=cwd, capture_output=True, text=True, timeout=3600, env=env)
    wall = time.perf_counter() - t0
    path = Path(cwd, "reports", "conformance.json")
    data = json.loads(path.read_text()) if path.exists() else {}
    if proc.returncode not in (0, 1):
        print(proc.stdout[-1500:] + proc.stderr[-1500:], file=sys.stderr)
    return wall, proc.returncode, data


def bench_run() -> None:
    before = load()
    wall, rc, data = ctk_run()
    row("ctk run, embedded reference, no Spark", f"{wall:.1f} s", "< 30 s", wall < 30,
        f"exit {rc}, overall {data.get('overall')}; {before} -> {load()}")


BEFORE_SEMANTICS = "e12a8f1"    # the last commit before the catalog-semantics family (issue 28)


def bench_semantics_cost(rounds: int = 2) -> None:
    """`ctk run` of the kit before the catalog-semantics family (a git worktree of BEFORE_SEMANTICS) and now,
    alternated ``rounds`` times so that both see the same machine; goal: now <= 1.25 x before."""
    repo = Path(__file__).resolve().parents[1]
    tree = Path(tempfile.mkdtemp(prefix="ctk-before-")) / "src"
    made = subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", str(tree), BEFORE_SEMANTICS],
                          capture_output=True, text=True)
    if made.returncode != 0:
        row("ctk run: semantics family cost", "-", "<= 1.25 x before", None, f"no worktree: {made.stderr.strip()}")
        return
    try:
        walls: dict[str, list[float]] = {"before": [], "now": []}
        counts: dict[str, int] = {}
        for _ in range(rounds):
            for which, source in (("before", str(tree)), ("now", None)):
                wall, rc, data = ctk_run(source=source)
                walls[which].append(wall)
                counts[which] = len(data.get("results", []))
        b, n = min(walls["before"]), min(walls["now"])
        row(f"ctk run before the semantics family ({BEFORE_SEMANTICS})", f"{b:.1f} s", "-", None,
            f"{counts.get('before')} results; all: {', '.join(f'{w:.1f}' for w in walls['before'])}")
        row("ctk run now", f"{n:.1f} s", "-", None,
            f"{counts.get('now')} results; all: {', '.join(f'{w:.1f}' for w in walls['now'])}")
        row("  now / before (best of each)", f"{n / b:.2f} x", "<= 1.25 x", n / b <= 1.25, load())
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], capture_output=True)


def bench_plain() -> None:
    import bench_plain_url

    serve = bench_plain_url.start_serve()
    try:
        for figure, extra in (("pytest --catalog-url, plain ctk serve", []),
                              ("  the same with --workers 3 (as ctk run)", ["--workers", "3"])):
            before = load()
            r = bench_plain_url.run_once(serve.url, ["-q", "-p", "no:cacheprovider", *extra], None)
            row(figure, f"{r['wall']:.1f} s", "< 30 s", r["wall"] < 30,
                f"exit {r['rc']}, overall {r['overall']}; {before} -> {load()}")
    finally:
        serve.stop()


def bench_spark() -> None:
    before = load()
    wall, rc, data = ctk_run("--ctk-spark")
    spark = [r for r in data.get("results", []) if str(r.get("requirement", "")).startswith("SPARK-")]
    row("ctk run --ctk-spark (the main job)", f"{wall:.1f} s", "< 120 s", wall < 120,
        f"exit {rc}, {sum(r['status'] == 'pass' for r in spark)}/{len(spark)} SPARK results pass; "
        f"{before} -> {load()}")


SCHEMA = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}


def _serve(tmp: str) -> tuple[subprocess.Popen, str]:
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    proc = subprocess.Popen([sys.executable, "-m", "ctk", "serve", "--warehouse", tmp, "--lifetime", "PT30M"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    url = proc.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        proc.terminate()
        raise RuntimeError(f"ctk serve did not start: {url!r}")
    return proc, url


def _commits(url: str, writers: int, per_writer: int, keyed: bool) -> tuple[float, int, int]:
    """(commits/s over all writers, ok, 5xx); each writer commits to its own table with its own client."""
    import httpx

    from ctk.client.keys import new_key

    tables = [f"t{uuid.uuid4().hex[:8]}" for _ in range(writers)]
    with httpx.Client(base_url=url + "/v1", timeout=60) as c:
        for t in tables:
            assert c.post("/namespaces/g/tables", json={"name": t, "schema": SCHEMA}).status_code == 200
    counts = {"ok": 0, "5xx": 0}
    lock = threading.Lock()
    barrier = threading.Barrier(writers + 1)

    def writer(t: str) -> None:
        with httpx.Client(base_url=url + "/v1", timeout=60) as c:
            barrier.wait(60)
            for i in range(per_writer):
                headers = {"Idempotency-Key": new_key()} if keyed else {}
                body = {"requirements": [], "updates": [{"action": "set-properties", "updates": {"n": str(i)}}]}
                r = c.post(f"/namespaces/g/tables/{t}", headers=headers, json=body)
                kind = "ok" if r.status_code == 200 else "5xx" if r.status_code >= 500 else "other"
                with lock:
                    counts[kind] = counts.get(kind, 0) + 1

    threads = [threading.Thread(target=writer, args=(t,), daemon=True) for t in tables]
    for t in threads:
        t.start()
    barrier.wait(60)
    t0 = time.perf_counter()
    for t in threads:
        t.join(600)
    wall = time.perf_counter() - t0
    if counts.get("other"):
        print(f"  ({counts['other']} commits answered neither 200 nor 5xx)")
    return counts["ok"] / wall, counts["ok"], counts["5xx"]


def bench_reference(commits: int) -> None:
    import httpx

    from bench_reference import _interleaved, _overhead

    with tempfile.TemporaryDirectory() as tmp:
        proc, url = _serve(tmp)
        try:
            with httpx.Client(base_url=url + "/v1", timeout=60) as c:
                assert c.post("/namespaces", json={"namespace": ["g"], "properties": {}}).status_code == 200
            _commits(url, 1, 100, True)                                       # warm-up
            before = load()
            one, ok1, e1 = _commits(url, 1, commits, True)
            four, ok4, e4 = _commits(url, 4, commits // 4, True)
            row("reference: 1 writer (keyed commits)", f"{one:.0f} /s", ">= 300 commits/s", one >= 300,
                f"{ok1} commits, {e1} x 5xx; {before} -> {load()}")
            row("reference: 4 writers / 1 writer", f"{four / one:.2f}" if one else "-", ">= 1.00", four >= one,
                f"{four:.0f} commits/s, {ok4} commits, {e4} x 5xx")
            row("reference: 5xx answers", f"{e1 + e4}", "0", e1 + e4 == 0)
            with httpx.Client(base_url=url + "/v1", timeout=60) as c:
                assert c.post("/namespaces", json={"namespace": ["b"], "properties": {}}).status_code == 200
                for name in "ab":   # bench_reference._interleaved commits to b.a and b.b
                    assert c.post("/namespaces/b/tables", json={"name": name, "schema": SCHEMA}).status_code == 200
                _interleaved(c, proc.pid, 60, (True, True))
                (pl, _), (kl, _) = _interleaved(c, proc.pid, commits // 2, (False, True))
                (al, _), (bl, _) = _interleaved(c, proc.pid, commits // 4, (False, False))
            over = _overhead(pl, kl)
            row("reference: key overhead (median latency)", f"{over:+.1f} %", "<= 10 %", over <= 10,
                f"plain {1 / statistics.median(pl):.0f}/s, keyed {1 / statistics.median(kl):.0f}/s; "
                f"noise floor (A/A) {_overhead(al, bl):+.1f} %")
        finally:
            proc.terminate()
            proc.wait(10)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-spark", action="store_true", help="skip the main job with Spark")
    ap.add_argument("--only", default="run,semantics,plain,spark,reference",
                    help="which figures (comma-separated)")
    ap.add_argument("--commits", type=int, default=400, help="commits per reference figure")
    args, _ = ap.parse_known_args(argv)
    only = set(args.only.split(","))
    if args.no_spark:
        only.discard("spark")
    print(f"speed goals ({os.cpu_count()} cores, {load()} at start; figures side by side in one run):")
    if "reference" in only:
        bench_reference(args.commits)
    if "run" in only:
        bench_run()
    if "semantics" in only:
        bench_semantics_cost()
    if "plain" in only:
        bench_plain()
    if "spark" in only:
        bench_spark()
    missed = [r[0] for r in ROWS if r[3] is False]
    print(f"goals met: {sum(r[3] is True for r in ROWS)}/{len(ROWS)}" + (f"; not met: {', '.join(missed)}"
                                                                          if missed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
