"""The README's two first commands, run as written on a PEP 668 system (Debian 12+, Ubuntu 23.04+), whose Python
refuses `pip install` outside a virtualenv.

The system is emulated: a Python prefix of its own (this interpreter's binary, its standard library linked in
entry by entry) whose standard library holds an `EXTERNALLY-MANAGED` marker, first on PATH as `python3`. The test
first shows the emulation bites (`python3 -m pip install nox` is refused there as on Debian), then runs the two
README lines in a copy of the checkout's tracked files with `bash -c`, word for word; the tests line with a
selection appended (`-- tests/...::test_exit_code_table`), since the whole suite cannot run inside itself. pip gets
every package from a wheelhouse packed from this interpreter's installed distributions (`PIP_NO_INDEX`,
`PIP_FIND_LINKS`): nothing but loopback is contacted; the Spark jars are the checkout's (`CTK_SPARK_JARS`).

The main job runs whole (the kit, Spark included, against the embedded reference): minutes. It runs under CI
(CI=true, as .ci/run sets it) and where CTK_README_LANE=1 asks for it; elsewhere it skips saying so."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import wheelhouse
from required import in_ci, require

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
LANE = "CTK_README_LANE"
TESTS_SELECTION = "tests/test_cli_readme.py::test_exit_code_table"

pytestmark = [
    pytest.mark.skipif(not (in_ci() or os.environ.get(LANE) == "1"),
                       reason=f"runs the main job and a nox tests session in an emulated PEP 668 system (minutes): "
                              f"under CI, or with {LANE}=1"),
    pytest.mark.timeout(1800),
]


def _fresh_machine_lines() -> dict[str, str]:
    """The README's first shell block: its two commands by the session they run ('kit', 'tests')."""
    first = re.search(r"```sh\n(.*?)```", README, re.S).group(1)
    lines = [ln.split("#", 1)[0].strip() for ln in first.splitlines() if not ln.startswith(" ")]
    return {ln.split()[-1]: ln for ln in lines}


def _system_python(root: Path) -> Path:
    """A Python installation under `root` as a Debian system's: not a virtualenv, with the PEP 668 marker in its
    standard library. Returns its bin directory."""
    base = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    stdlib = Path(sysconfig.get_paths(vars={"installed_base": str(base), "base": str(base)})["stdlib"])
    (root / "bin").mkdir(parents=True)
    binary = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    shutil.copy2(binary, root / "bin" / "python3")     # a copy, not a link: its prefix is found from where it is
    (root / "lib").mkdir()
    for entry in (base / "lib").iterdir():              # libpython, found through $ORIGIN/../lib where linked so
        if entry.name != version:
            (root / "lib" / entry.name).symlink_to(entry)
    own = root / "lib" / version
    own.mkdir()
    for entry in stdlib.iterdir():
        (own / entry.name).symlink_to(entry)
    (own / "EXTERNALLY-MANAGED").write_text(
        "[externally-managed]\nError=This Python is managed by the system (emulated by the kit's tests): use a "
        "virtualenv.\n")
    return root / "bin"


def _checkout_copy(into: Path) -> Path:
    """The checkout's tracked files as they are now (a clean clone of the working tree), nothing else."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, timeout=60)
    if listed.returncode != 0:
        require("a git checkout", f"the README's commands run from a checkout; git ls-files: {listed.stderr!r}")
    for name in filter(None, listed.stdout.decode().split("\0")):
        src = REPO / name
        if not src.exists() and not src.is_symlink():
            continue                                    # deleted in the working tree, not yet committed
        dst = into / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, dst)
    return into


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    """(environment, checkout) of the emulated Debian 12 machine."""
    from ctk.spark import jars

    root = tmp_path_factory.mktemp("pep668")
    bindir = _system_python(root / "system")
    try:
        packed = wheelhouse.build(["iceberg-rest-ctk[all]", "nox", "setuptools>=70.1"], root / "wheels",
                                  leave_out=["iceberg-rest-ctk"])
    except LookupError as exc:
        require("the wheelhouse", f"install the kit's test extra first (pip install -e '.[all]'): {exc}")
    assert packed
    spark_jars = jars.default_jars_dir()
    if jars.check_jars(spark_jars):
        require("the Spark jars", f"build them first (ctk spark-jars): {jars.check_jars(spark_jars)[0]}")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "HYPOTHESIS_", "NOX", "PIP_", "PYTHON", "VIRTUAL_ENV", "CTK_"))}
    env.update(PATH=f"{bindir}{os.pathsep}/usr/bin{os.pathsep}/bin", PIP_NO_INDEX="1",
               PIP_FIND_LINKS=str(root / "wheels"), PIP_CONFIG_FILE=os.devnull, CTK_SPARK_JARS=str(spark_jars),
               PYTHONDONTWRITEBYTECODE="1")
    return env, _checkout_copy(root / "checkout")


def _bash(line: str, env: dict, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def test_the_emulated_system_refuses_pip_as_debian_does(machine):
    env, checkout = machine
    which = _bash("command -v python3", env, checkout, 30).stdout.strip()
    assert which == str(Path(env["PATH"].split(os.pathsep)[0]) / "python3"), which
    where = _bash("python3 -c 'import sys; print(sys.prefix == sys.base_prefix)'", env, checkout, 60)
    assert where.stdout.strip() == "True", where.stderr         # the system's Python, not a virtualenv
    refused = _bash("python3 -m pip install nox", env, checkout, 300)
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stderr, refused.stderr[-2000:]


def test_readme_main_job_runs_as_written(machine):
    env, checkout = machine
    line = _fresh_machine_lines()["kit"]
    done = _bash(line, env, checkout, 1500)
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"{line}\n{out[-5000:]}"
    assert "externally-managed" not in out
    assert (checkout / ".venv" / "bin" / "nox").exists() and (checkout / ".nox" / "kit").is_dir()
    assert re.search(r"^exit 0: no MUST broken", out, re.M), out[-3000:]     # the kit's verdict, not nox's
    for name in ("junit.xml", "conformance.json", "conformance.html"):
        assert (checkout / "reports" / name).is_file(), name


def test_readme_tests_command_runs_as_written(machine):
    env, checkout = machine
    line = _fresh_machine_lines()["tests"]
    done = _bash(f"{line} -- {TESTS_SELECTION}", env, checkout, 1500)
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"{line}\n{out[-5000:]}"
    assert "externally-managed" not in out
    assert re.search(r"\b1 passed\b", out), out[-3000:]
    assert (checkout / ".nox" / "tests").is_dir()
