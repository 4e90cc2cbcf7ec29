"""Toxiproxy compatibility, shown by other people's code: third-party Toxiproxy clients drive our control API
(toxiproxy-python from PyPI; toxiproxy-node-client from npm when node and npm are here), and our
InterposerClient drives a real Toxiproxy server when one is at hand (TOXIPROXY_URL, or toxiproxy-server on
PATH, started on 127.0.0.1). Each creates a proxy in front of a loopback echo server, adds a latency toxic and
a timeout toxic through the client, measures what they do to traffic through the proxy, and removes them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import procs
from interposer_helpers import connect, recv_exactly, recv_until_closed

from ctk.interposer import Interposer, InterposerClient

# long enough that "no latency any more" can be a generous bound (half of it) on a loaded machine
LATENCY_MS = 1200
TIMEOUT_MS = 300
NODE_CLIENT = "toxiproxy-node-client@4.1.0"


@pytest.fixture
def control(http_server):
    """Our interposer with its Toxiproxy-compatible API on a free loopback port."""
    with Interposer(upstream=http_server.address, api=("127.0.0.1", 0)) as ip:
        yield ip


def echo_roundtrip(port: int, payload: bytes = b"ping") -> float:
    s = connect(("127.0.0.1", port))
    try:
        t0 = time.perf_counter()
        s.sendall(payload)
        assert recv_exactly(s, len(payload), timeout=5) == payload
        return time.perf_counter() - t0
    finally:
        s.close()


def timeout_effect(port: int) -> tuple[bytes, str, float]:
    """Send through a proxy with a timeout toxic: what came back, how it ended, and when."""
    s = connect(("127.0.0.1", port))
    try:
        t0 = time.perf_counter()
        s.sendall(b"lost")
        data, how = recv_until_closed(s, timeout=5)
        return data, how, time.perf_counter() - t0
    finally:
        s.close()


def assert_latency(port: int) -> None:
    took = echo_roundtrip(port)
    assert LATENCY_MS / 1000 - 0.02 <= took < LATENCY_MS / 1000 + 10, took     # upper bound: a stall only


def assert_timeout(port: int) -> None:
    data, how, took = timeout_effect(port)
    assert data == b"" and how in ("eof", "reset"), (data, how)
    assert TIMEOUT_MS / 1000 - 0.05 <= took, took     # closed by the toxic (eof/reset within the 5 s wait)


def assert_clean(port: int) -> None:
    assert echo_roundtrip(port) < LATENCY_MS / 1000 / 2     # a latency toxic left behind would take LATENCY_MS


def port_of(listen: str) -> int:
    return int(listen.rsplit(":", 1)[1])


# ------------------------------------------------------------------ toxiproxy-python (PyPI)


@pytest.fixture
def tp_python(control):
    toxiproxy = pytest.importorskip("toxiproxy", reason="toxiproxy-python is not installed (pip install toxiproxy-python)")
    from toxiproxy.api import APIConsumer

    saved = (APIConsumer.host, APIConsumer.port)
    server = toxiproxy.Toxiproxy()
    server.update_api_consumer("127.0.0.1", port_of(control.api_url))
    try:
        yield server
    finally:
        APIConsumer.host, APIConsumer.port = saved


def test_toxiproxy_python_client(tp_python, control, echo_server):
    from toxiproxy.exceptions import InvalidToxic, NotFound, ProxyExists

    server = tp_python
    assert server.running()
    assert b"version" in server.version()
    upstream = f"127.0.0.1:{echo_server.address[1]}"
    proxy = server.create(upstream=upstream, name="tp_echo", listen="127.0.0.1:0")
    port = port_of(proxy.listen)
    assert port > 0 and proxy.enabled is True
    assert set(server.proxies()) == {"ctk", "tp_echo"}
    assert_clean(port)

    proxy.add_toxic(type="latency", attributes={"latency": LATENCY_MS})
    assert set(proxy.toxics()) == {"latency_downstream"}
    assert proxy.get_toxic("latency_downstream").attributes == {"latency": LATENCY_MS, "jitter": 0}
    assert_latency(port)
    assert proxy.destroy_toxic("latency_downstream")
    assert_clean(port)

    proxy.add_toxic(type="timeout", name="cut", stream="upstream", attributes={"timeout": TIMEOUT_MS})
    assert proxy.get_toxic("cut").stream == "upstream"
    assert_timeout(port)
    assert proxy.destroy_toxic("cut")
    assert proxy.toxics() == {}
    assert_clean(port)

    # errors come back as the client's exceptions (it maps 400 / 404 / 409)
    with pytest.raises(InvalidToxic):
        proxy.add_toxic(type="no_such_toxic")
    with pytest.raises(ProxyExists):
        server.create(upstream=upstream, name="tp_echo")
    with server.get_proxy("tp_echo").down():
        with pytest.raises(OSError):
            connect(("127.0.0.1", port), timeout=1)
    assert_clean(port)
    assert server.reset()
    assert proxy.destroy()
    with pytest.raises(NotFound):
        proxy.add_toxic(type="latency")
    assert set(server.proxies()) == {"ctk"}


# ------------------------------------------------------------------ toxiproxy-node-client (npm)

NODE_SCRIPT = r"""
const { Toxiproxy } = require("toxiproxy-node-client");
const net = require("net");
const [api, upstream, latencyMs, timeoutMs] = process.argv.slice(2);

function exchange(port, payload, expectEcho) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let got = Buffer.alloc(0);
    let done = false;
    const finish = (how) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ ms: Date.now() - t0, data: got.toString(), how });
    };
    const sock = net.connect(port, "127.0.0.1", () => sock.write(payload));
    sock.setNoDelay(true);
    sock.on("data", (d) => {
      got = Buffer.concat([got, d]);
      if (expectEcho && got.length >= payload.length) finish("echo");
    });
    sock.on("end", () => finish("eof"));
    sock.on("error", (e) => finish(e.code === "ECONNRESET" ? "reset" : "error:" + e.code));
    const timer = setTimeout(() => finish("timeout"), 5000);
  });
}

(async () => {
  const out = {};
  const toxiproxy = new Toxiproxy(api);
  out.version = await toxiproxy.getVersion();
  const proxy = await toxiproxy.createProxy({ name: "node_echo", listen: "localhost:0", upstream });
  const port = Number(proxy.listen.split(":").pop());
  out.clean1 = await exchange(port, "ping", true);
  const latency = await proxy.addToxic({ type: "latency", attributes: { latency: Number(latencyMs) } });
  out.latencyToxic = latency.toJson();
  out.latency = await exchange(port, "ping", true);
  await latency.remove();
  out.clean2 = await exchange(port, "ping", true);
  const cut = await proxy.addToxic({ name: "cut", type: "timeout", stream: "upstream",
                                     attributes: { timeout: Number(timeoutMs) } });
  out.timeoutToxic = (await proxy.getToxic("cut")).toJson();
  out.timeout = await exchange(port, "lost", false);
  await cut.remove();
  out.clean3 = await exchange(port, "ping", true);
  out.updated = (await proxy.update({ enabled: false })).toJson();
  out.all = Object.keys(await toxiproxy.getAll()).sort();
  await proxy.remove();
  try {
    await toxiproxy.get("node_echo");
    out.afterRemove = "found";
  } catch (e) {
    out.afterRemove = e.message;
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
"""


@pytest.fixture(scope="module")
def node_client_dir() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("node and npm are not installed (apt-get install nodejs npm): no Node client test")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 18:
        pytest.skip(f"toxiproxy-node-client needs node >= 18 (fetch); this is {version}")
    cache = Path(os.environ.get("CTK_NODE_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                 / "ctk-tests" / "node")
    module = cache / "node_modules" / "toxiproxy-node-client" / "package.json"
    if not module.exists():
        cache.mkdir(parents=True, exist_ok=True)
        try:
            r = subprocess.run([npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", "--no-save",
                                "--loglevel=error", NODE_CLIENT], capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired:
            pytest.skip(f"npm install {NODE_CLIENT} took more than 180 s (no registry?)")
        if r.returncode != 0 or not module.exists():
            pytest.skip(f"npm install {NODE_CLIENT} failed (no registry?): {(r.stderr or r.stdout).strip()[-300:]}")
    return cache


def test_toxiproxy_node_client(node_client_dir, control, echo_server, tmp_path):
    script = tmp_path / "drive.js"
    script.write_text(NODE_SCRIPT)
    r = subprocess.run(
        ["node", str(script), control.api_url, f"127.0.0.1:{echo_server.address[1]}", str(LATENCY_MS),
         str(TIMEOUT_MS)],
        capture_output=True, text=True, timeout=60, cwd=node_client_dir,
        env=dict(os.environ, NODE_PATH=str(node_client_dir / "node_modules")),
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert json.loads(out["version"])["version"]
    assert out["latencyToxic"] == {"name": "latency_downstream", "type": "latency", "stream": "downstream",
                                   "toxicity": 1, "attributes": {"latency": LATENCY_MS, "jitter": 0}}
    for key in ("clean1", "clean2", "clean3"):
        assert out[key]["how"] == "echo" and out[key]["data"] == "ping" and out[key]["ms"] < 200, out[key]
    assert out["latency"]["how"] == "echo" and LATENCY_MS - 20 <= out["latency"]["ms"] < LATENCY_MS + 1500
    assert out["timeoutToxic"]["stream"] == "upstream"
    assert out["timeout"]["data"] == "" and out["timeout"]["how"] in ("eof", "reset"), out["timeout"]
    assert TIMEOUT_MS - 50 <= out["timeout"]["ms"] < TIMEOUT_MS + 2000
    assert out["updated"]["enabled"] is False
    assert out["all"] == ["ctk", "node_echo"]
    assert "404" in out["afterRemove"]
    assert control.counters["toxics"] == {}  # the ctk proxy itself was never touched


# ------------------------------------------------------------------ InterposerClient against a real Toxiproxy


@pytest.fixture
def real_toxiproxy():
    url = os.environ.get("TOXIPROXY_URL")
    if url:
        host = url.split("://", 1)[-1].rsplit(":", 1)[0].strip("[]")
        if host not in ("localhost",) and not host.startswith("127.") and host != "::1":
            pytest.skip(f"TOXIPROXY_URL={url} is not a loopback address; these tests talk to 127.0.0.0/8 only")
        yield url.rstrip("/")
        return
    binary = shutil.which("toxiproxy-server")
    if not binary:
        pytest.skip("no real Toxiproxy: set TOXIPROXY_URL (a loopback URL) or put toxiproxy-server on PATH")

    def answers(port: int) -> bool:
        with InterposerClient(f"http://127.0.0.1:{port}", timeout=1) as c:
            return bool(c.version())

    # toxiproxy-server takes a port number and does not say which port it got: started again on another port
    # when the one picked was taken meanwhile, ready once it listens there itself
    try:
        server, port = procs.start_on_free_port(lambda p: [binary, "-host", "127.0.0.1", "-port", str(p)],
                                                ready=answers, timeout=15)
    except procs.StartFailed as exc:
        pytest.skip(f"toxiproxy-server did not come up: {exc}")
    with server:
        yield f"http://127.0.0.1:{port}"


def test_interposer_client_against_real_toxiproxy(real_toxiproxy, echo_server):
    from ctk.interposer import InterposerError

    name = f"ctk_echo_{os.getpid()}"
    with InterposerClient(real_toxiproxy) as c:
        assert c.version()
        p = c.create_proxy(name, upstream=f"127.0.0.1:{echo_server.address[1]}", listen="127.0.0.1:0")
        try:
            port = port_of(p["listen"])
            assert p["enabled"] is True and p.get("toxics", []) == []
            assert_clean(port)
            t = c.add_toxic(name, "latency", attributes={"latency": LATENCY_MS})
            assert t["name"] == "latency_downstream" and t["toxicity"] == 1
            assert_latency(port)
            assert c.update_toxic(name, "latency_downstream", attributes={"jitter": 5})["attributes"]["latency"] \
                == LATENCY_MS
            c.remove_toxic(name, "latency_downstream")
            assert_clean(port)
            c.add_toxic(name, "timeout", stream="upstream", attributes={"timeout": TIMEOUT_MS}, name="cut")
            assert_timeout(port)
            c.remove_toxic(name, "cut")
            assert c.toxics(name) == []
            assert_clean(port)
            with pytest.raises(InterposerError) as exc:
                c.create_proxy(name, upstream="127.0.0.1:1")
            assert exc.value.status == 409 and exc.value.message == "proxy already exists"
            with pytest.raises(InterposerError) as exc:
                c.get_toxic(name, "nope")
            assert exc.value.status == 404 and exc.value.message == "toxic not found"
            with pytest.raises(InterposerError) as exc:
                c.counters(name)  # our extension: a real Toxiproxy has no such route
            assert exc.value.status in (404, 405)
        finally:
            c.delete_proxy(name)
