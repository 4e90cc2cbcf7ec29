"""A Spark standalone cluster on 127.0.0.1 for tests: one master and one worker (1 core, 1g) started from
pyspark's own distribution (`bin/spark-class org.apache.spark.deploy.master.Master` / `...worker.Worker`).

Ports are chosen by the JVMs (--port 0, --webui-port 0) and read from their logs; SPARK_LOCAL_IP=127.0.0.1
binds the RPC ports and the web UIs to loopback. Each process runs in its own process group, which is ended
when the context exits (the worker's executors with it), also on failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
MASTER_UI = re.compile(r"Successfully started service 'MasterUI' on port (\d+)")


@dataclass
class Cluster:
    master_url: str          # spark://127.0.0.1:PORT
    webui: str               # http://127.0.0.1:PORT
    logs: Path

    def status(self) -> dict:
        """The master's JSON status (workers, active and completed applications)."""
        return self.get(f"{self.webui}/json/")

    @staticmethod
    def get(url: str) -> dict:
        """A JSON status page of the master or a worker (loopback only)."""
        if not url.startswith(("http://127.0.0.1:", "http://localhost:")):
            raise ValueError(f"not a loopback status page: {url}")
        with urllib.request.urlopen(url.replace("//localhost:", "//127.0.0.1:"), timeout=10) as resp:
            return json.load(resp)

    def log_tail(self, lines: int = 30) -> str:
        out = []
        for name in ("master.log", "worker.log"):
            path = self.logs / name
            if path.exists():
                tail = [x for x in path.read_text(errors="replace").splitlines() if not x.startswith("\tat ")]
                out.append(f"--- {name}\n" + "\n".join(tail[-lines:]))
        return "\n".join(out)


def spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def _wait_for(pattern: re.Pattern, log: Path, proc: subprocess.Popen, seconds: float) -> re.Match:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        m = pattern.search(log.read_text(errors="replace")) if log.exists() else None
        if m:
            return m
        if proc.poll() is not None:
            raise RuntimeError(f"{log.stem} exited with {proc.returncode} before '{pattern.pattern}':\n"
                               + log.read_text(errors="replace")[-3000:])
        time.sleep(0.5)
    raise TimeoutError(f"{log.stem}: no '{pattern.pattern}' within {seconds}s:\n" + log.read_text(errors="replace")[-3000:])


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


@contextlib.contextmanager
def standalone_cluster(workdir: Path, *, memory: str = "1g", start_seconds: float = 240.0) -> Iterator[Cluster]:
    home = spark_home()
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(workdir),
           "SPARK_WORKER_DIR": str(workdir / "work"), "SPARK_NO_DAEMONIZE": "1"}
    spark_class = str(home / "bin" / "spark-class")
    procs: list[subprocess.Popen] = []
    try:
        master_log = workdir / "master.log"
        with open(master_log, "wb") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
                 "--webui-port", "0"], env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
        master_url = _wait_for(MASTER_URL, master_log, procs[0], start_seconds).group(1)
        webui = f"http://127.0.0.1:{_wait_for(MASTER_UI, master_log, procs[0], start_seconds).group(1)}"
        (workdir / "work").mkdir(exist_ok=True)
        worker_log = workdir / "worker.log"
        with open(worker_log, "wb") as out:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", "0",
                 "--webui-port", "0", "--cores", "1", "--memory", memory, "--work-dir", str(workdir / "work"),
                 master_url], env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
        cluster = Cluster(master_url, webui, workdir)
        _wait_for(re.compile(r"Successfully registered with master"), worker_log, procs[1], start_seconds)
        yield cluster
    finally:
        for proc in reversed(procs):
            _stop(proc)
