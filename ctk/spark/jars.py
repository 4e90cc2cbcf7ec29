"""Offline assembly of the Iceberg Spark runtime for Spark 3.5 / Scala 2.12: `ctk spark-jars`.

Why this exists: the Iceberg runtime jar that ships on the package index (inside the
`snowpark-connect-deps-iceberg` package) lacks its relocated dependencies
(`org.apache.iceberg.shaded.com.fasterxml.jackson.*` and `org.apache.iceberg.shaded.org.apache.hc.*`).
Without them even a Hadoop catalog fails with NoClassDefFoundError. We rebuild them by relocating:

- jackson-core / -databind / -annotations / -datatype-jsr310 2.15 (the jars PySpark ships in pyspark/jars);
- httpclient5 5.6 and httpcore5 (+h2) 5.4 from Debian's `libhttpclient5-java` / `libhttpcore5-java` packages
  (Debian forky/sid; trixie and bookworm carry 5.2, too old for Iceberg 1.10), fetched once from the Debian
  mirror and checked against pinned SHA-256 sums, or taken from `--debs DIR`.

Relocation is done by `relocate/Relocate.java` (ours), compiled with `javac` at build time against the ASM copy
PySpark ships (xbean-asm9-shaded). The result goes to a cache directory (`--dest`, else $CTK_SPARK_JARS, else
`<project>/.ctk-cache/spark-jars/`) together with `manifest.json` (SHA-256 of every output and input);
`ctk spark-jars --check` verifies it. Once built, nothing here touches the network.

Public API: `default_jars_dir()`, `ensure_jars(dest=None, debs_dir=None)`, `classpath(dest=None)`,
`check_jars(dest=None)`, `JarsMissing`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import io
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Literal, TypedDict

MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
SPARK_BINARY = "3.5"
SCALA_BINARY = "2.12"
DEPS_JAR = "iceberg-shaded-deps-{version}.jar"

RELOCATIONS = {
    "com.fasterxml.jackson": "org.apache.iceberg.shaded.com.fasterxml.jackson",
    "org.apache.hc": "org.apache.iceberg.shaded.org.apache.hc",
}
# jars of pyspark/jars relocated under the jackson prefix (the version is whatever pyspark ships, 2.15.x)
JACKSON_JARS = ("jackson-core", "jackson-databind", "jackson-annotations", "jackson-datatype-jsr310")
ASM_JAR = "xbean-asm9-shaded"

DEBIAN_MIRROR = os.environ.get("CTK_DEBIAN_MIRROR", "https://deb.debian.org/debian")
DEBIAN_SUITES = ("forky", "sid")  # fallback index lookup when a pinned file left the pool


@dataclass(frozen=True)
class Deb:
    package: str
    version: str
    pool_path: str
    sha256: str
    jars: tuple[str, ...]  # regexes of jar names under usr/share/java to take from it


DEBS = (
    Deb(
        "libhttpclient5-java",
        "5.6.4-1",
        "pool/main/h/httpcomponents-client5/libhttpclient5-java_5.6.4-1_all.deb",
        "65ba2f468850c90eea5e47f6f3a03f8212badfa285c935e451d49458a61885ed",
        (r"httpclient5-\d[\w.]*\.jar",),
    ),
    Deb(
        "libhttpcore5-java",
        "5.4.4-1",
        "pool/main/h/httpcomponents-core5/libhttpcore5-java_5.4.4-1_all.deb",
        "cf3229ab8c48b9e2915c7d98dda993b9b5a9ad9beccd60db4dfd6df390133d10",
        (r"httpcore5-\d[\w.]*\.jar", r"httpcore5-h2-\d[\w.]*\.jar"),
    ),
)


class JarsMissing(RuntimeError):
    """The assembled jars are absent or do not match their manifest."""


class BuildError(RuntimeError):
    """`ctk spark-jars` could not assemble the jars."""


# ----------------------------------------------------------------------------------------------- locations


def project_root(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file() or (d / ".git").exists():
            return d
    return here


def default_jars_dir() -> Path:
    """$CTK_SPARK_JARS, else `<project of the cwd>/.ctk-cache/spark-jars`; when that holds no build but the
    checkout this package runs from (an editable install) has one, that one."""
    env = os.environ.get("CTK_SPARK_JARS")
    if env:
        return Path(env).expanduser().resolve()
    here = project_root() / ".ctk-cache" / "spark-jars"
    checkout = Path(__file__).resolve().parents[2]
    theirs = checkout / ".ctk-cache" / "spark-jars"
    if not (here / MANIFEST).is_file() and (checkout / "pyproject.toml").is_file() and (theirs / MANIFEST).is_file():
        return theirs
    return here


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def iceberg_runtime_source() -> Path:
    pkg = _package_dir("snowpark_connect_deps_iceberg")
    if pkg is None:
        raise BuildError(
            "the package `snowpark-connect-deps-iceberg` is not installed "
            "(pip install 'iceberg-rest-ctk[spark]' or pip install snowpark-connect-deps-iceberg==1.0.3)"
        )
    found = sorted((pkg / "jars").glob(f"iceberg-spark-runtime-{SPARK_BINARY}_{SCALA_BINARY}-*.jar"))
    if not found:
        raise BuildError(f"no iceberg-spark-runtime-{SPARK_BINARY}_{SCALA_BINARY}-*.jar in {pkg / 'jars'}")
    return found[-1]


def iceberg_version(runtime: Path) -> str:
    m = re.search(r"-(\d+\.\d+\.\d+[\w.-]*)\.jar$", runtime.name)
    return m.group(1) if m else "unknown"


def pyspark_jars_dir() -> Path:
    pkg = _package_dir("pyspark")
    if pkg is None or not (pkg / "jars").is_dir():
        raise BuildError("pyspark is not installed (pip install 'pyspark>=3.5,<3.6')")
    return pkg / "jars"


def _one_jar(directory: Path, artifact: str) -> Path:
    found = sorted(p for p in directory.glob(f"{artifact}-*.jar") if re.fullmatch(rf"{re.escape(artifact)}-\d[\w.-]*\.jar", p.name))
    if not found:
        raise BuildError(f"{artifact}-*.jar not found in {directory}")
    return found[-1]


def java_tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        hint = " (a JDK is needed to build the jars, e.g. apt-get install openjdk-17-jdk-headless)" if name == "javac" else ""
        raise BuildError(f"`{name}` not found on PATH or in $JAVA_HOME/bin{hint}")
    return found


def relocate_source() -> Path:
    return Path(__file__).resolve().parent / "relocate" / "Relocate.java"


# ----------------------------------------------------------------------------------------------- helpers


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Serialize builders of one cache dir (pytest-xdist workers, parallel CLI runs)."""
    import fcntl

    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as fh:
        deadline = time.monotonic() + 900
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise BuildError(f"timed out waiting for the lock on {directory}") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _log(msg: str, quiet: bool = False) -> None:
    if not quiet:
        print(f"ctk spark-jars: {msg}", file=sys.stderr, flush=True)


def _http_get(url: str, timeout: float = 60.0) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": "iceberg-rest-ctk"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - fixed Debian mirror
        return resp.read()


def _deb_members(data: bytes) -> dict[str, bytes]:
    """Parse an ar archive (a .deb) into {member name: bytes}."""
    if not data.startswith(b"!<arch>\n"):
        raise BuildError("not a Debian package (no ar magic)")
    pos, out = 8, {}
    while pos + 60 <= len(data):
        header = data[pos : pos + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        pos += 60
        out[name] = data[pos : pos + size]
        pos += size + (size & 1)
    return out


def extract_deb_jars(deb: Path, patterns: tuple[str, ...], into: Path) -> list[Path]:
    """Take the regular files usr/share/java/<pattern> out of a .deb (data.tar.xz/.gz, or dpkg-deb)."""
    members = _deb_members(deb.read_bytes())
    data_name = next((n for n in members if n.startswith("data.tar")), None)
    if data_name is None:
        raise BuildError(f"{deb.name}: no data.tar member")
    payload = members[data_name]
    into.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    if data_name.endswith((".xz", ".gz", ".bz2")) or data_name == "data.tar":
        mode: Literal["r:", "r:*"]
        if data_name.endswith(".xz"):
            payload = lzma.decompress(payload)
            mode = "r:"
        else:
            mode = "r:*"
        with tarfile.open(fileobj=io.BytesIO(payload), mode=mode) as tar:
            for member in tar.getmembers():
                base = member.name.rsplit("/", 1)[-1]
                if (
                    member.isfile()
                    and member.name.lstrip("./").startswith("usr/share/java/")
                    and any(re.fullmatch(p, base) for p in patterns)
                ):
                    target = into / base
                    src = tar.extractfile(member)
                    if src is None:  # only a regular file has a body, and member.isfile() said it is one
                        raise BuildError(f"{deb.name}: {member.name} has no content in {data_name}")
                    with src, open(target, "wb") as dst:
                        shutil.copyfileobj(src, dst)
                    out.append(target)
    else:  # data.tar.zst and friends: let dpkg-deb do it
        tool = shutil.which("dpkg-deb")
        if not tool:
            raise BuildError(f"{deb.name}: {data_name} needs dpkg-deb to extract")
        with tempfile.TemporaryDirectory(dir=into) as tmp:
            subprocess.run([tool, "-x", str(deb), tmp], check=True, timeout=120)
            for p in (Path(tmp) / "usr/share/java").iterdir():
                if p.is_file() and not p.is_symlink() and any(re.fullmatch(pat, p.name) for pat in patterns):
                    out.append(Path(shutil.copy2(p, into / p.name)))
    if not out:
        raise BuildError(f"{deb.name}: no jar matching {patterns} under usr/share/java")
    return sorted(out)


def _index_lookup(package: str) -> tuple[str, str, str]:
    """(version, pool path, sha256) of `package` in the first Debian suite index that has it."""
    for suite in DEBIAN_SUITES:
        url = f"{DEBIAN_MIRROR}/dists/{suite}/main/binary-all/Packages.xz"
        try:
            text = lzma.decompress(_http_get(url, timeout=120)).decode("utf-8", "replace")
        except (OSError, lzma.LZMAError):
            continue
        for stanza in text.split("\n\n"):
            if f"\nPackage: {package}\n" in f"\n{stanza}\n":
                fields = dict(
                    line.split(": ", 1) for line in stanza.splitlines() if ": " in line and not line.startswith(" ")
                )
                return fields["Version"], fields["Filename"], fields["SHA256"]
    raise BuildError(f"{package} not found in the Debian indexes of {', '.join(DEBIAN_SUITES)}")


def offline_default() -> bool:
    """$CTK_OFFLINE set: never fetch (as --offline)."""
    return os.environ.get("CTK_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def downloads() -> list[str]:
    """What a build without --debs fetches, one line each: package, version, URL, pinned SHA-256."""
    return [f"{d.package} {d.version}: {DEBIAN_MIRROR}/{d.pool_path} (SHA-256 {d.sha256})" for d in DEBS]


class DebRecord(TypedDict):
    """Where the jars of one Debian package came from (the manifest's "debs" entries)."""
    package: str
    version: str
    source: str
    sha256: str
    pinned: bool


def _deb_record(deb: Deb, version: str, source: str, digest: str) -> DebRecord:
    return {"package": deb.package, "version": version, "source": source, "sha256": digest,
            "pinned": digest == deb.sha256}


def obtain_deb(deb: Deb, debs_dir: Path | None, store: Path, quiet: bool = False,
               offline: bool = False) -> tuple[Path, DebRecord]:
    """A verified copy of `deb`: from `debs_dir` (any version of the package), the cache, or the mirror (never
    with ``offline``: then a BuildError says what to fetch and where to put it)."""
    candidates: list[Path] = []
    if debs_dir is not None:
        candidates += sorted(Path(debs_dir).glob(f"{deb.package}_*.deb"), reverse=True)
        if not candidates:
            raise BuildError(f"--debs {debs_dir}: no {deb.package}_*.deb there")
    candidates += sorted(store.glob(f"{deb.package}_*.deb"), reverse=True)
    for cand in candidates:
        digest = sha256_file(cand)
        if debs_dir is not None and cand.parent == Path(debs_dir) or digest == deb.sha256:
            # a user-supplied file is trusted by choice; we record its checksum and its version
            version = cand.name.split("_")[1] if cand.name.count("_") >= 2 else "unknown"
            return cand, _deb_record(deb, version, str(cand), digest)
    # fetch: the pinned file first, then whatever the suite index names now (verified against the index)
    url = f"{DEBIAN_MIRROR}/{deb.pool_path}"
    if offline:
        raise BuildError(f"offline: {deb.package}_*.deb is neither in --debs nor in the cache {store}; fetch "
                         f"{url} (SHA-256 {deb.sha256}) on a machine with network and pass its directory as "
                         "--debs DIR")
    store.mkdir(parents=True, exist_ok=True)
    expected, version = deb.sha256, deb.version
    try:
        # always said, also with --quiet: this is the only network access of the kit outside loopback
        print(f"ctk spark-jars: downloading {deb.package} {deb.version} from {url} (pinned SHA-256 "
              f"{deb.sha256[:16]}…; --debs DIR or --offline avoids the network)", file=sys.stderr, flush=True)
        data = _http_get(url)
    except urllib.error.HTTPError as exc:
        if exc.code != 404:
            raise BuildError(f"fetching {url}: {exc}") from exc
        version, pool_path, expected = _index_lookup(deb.package)
        url = f"{DEBIAN_MIRROR}/{pool_path}"
        _log(f"pinned {deb.package} {deb.version} left the pool; fetching {version}: {url}", quiet)
        data = _http_get(url)
    except OSError as exc:
        raise BuildError(
            f"cannot fetch {url} ({exc}); download {deb.package} by hand and pass --debs DIR"
        ) from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise BuildError(f"{url}: SHA-256 {digest} does not match the expected {expected}")
    path = store / url.rsplit("/", 1)[-1]
    path.write_bytes(data)
    return path, _deb_record(deb, version, url, digest)


# ----------------------------------------------------------------------------------------------- verification

_SHADED_REF = re.compile(rb"org/apache/iceberg/shaded/(?:com/fasterxml/jackson|org/apache/hc)/[A-Za-z0-9_/$]+")


def unresolved_references(jars: list[Path]) -> list[str]:
    """Relocated class names referenced by any class in `jars` that no jar provides (class-level check)."""
    names: set[str] = set()
    refs: set[str] = set()
    for jar in jars:
        with zipfile.ZipFile(jar) as z:
            entries = z.namelist()
            names.update(entries)
            for n in entries:
                if n.endswith(".class"):
                    refs.update(m.decode() for m in _SHADED_REF.findall(z.read(n)))
    packages = {n.rsplit("/", 1)[0] for n in names if "/" in n}
    return sorted(
        r for r in refs if f"{r}.class" not in names and r not in packages and not r.endswith("/package")
    )


def _read_manifest(dest: Path) -> dict:
    path = dest / MANIFEST
    if not path.is_file():
        raise JarsMissing(f"no Iceberg Spark jars in {dest}")
    try:
        manifest = json.loads(path.read_text())
    except ValueError as exc:
        raise JarsMissing(f"{path} is unreadable ({exc})") from exc
    if manifest.get("format") != MANIFEST_FORMAT:
        raise JarsMissing(f"{path} has an old format")
    return manifest


def check_jars(dest: Path | None = None, *, full: bool = True) -> list[str]:
    """Problems with the assembled jars in `dest` ([] = fine). `full` hashes; otherwise sizes only."""
    dest = Path(dest) if dest else default_jars_dir()
    try:
        manifest = _read_manifest(dest)
    except JarsMissing as exc:
        return [str(exc)]
    problems = []
    for item in manifest["jars"]:
        path = dest / item["name"]
        if not path.is_file():
            problems.append(f"{item['name']}: missing")
        elif path.stat().st_size != item["size"]:
            problems.append(f"{item['name']}: size {path.stat().st_size} != {item['size']}")
        elif full and sha256_file(path) != item["sha256"]:
            problems.append(f"{item['name']}: SHA-256 mismatch")
    return problems


def classpath(dest: Path | None = None) -> list[Path]:
    """The jars for spark.jars, in order; raises JarsMissing (with the fix) when absent or altered."""
    dest = Path(dest) if dest else default_jars_dir()
    problems = check_jars(dest, full=False)
    if problems:
        raise JarsMissing(
            f"{'; '.join(problems)}: run `ctk spark-jars` first"
            + (f" (with --dest {dest})" if dest != default_jars_dir() else "")
        )
    return [dest / name for name in _read_manifest(dest)["classpath"]]


# ----------------------------------------------------------------------------------------------- build


def build(dest: Path, debs_dir: Path | None = None, *, quiet: bool = False, offline: bool = False) -> dict:
    """Assemble the jars into `dest` (no lock; use ensure_jars). Returns the manifest."""
    started = time.monotonic()
    runtime = iceberg_runtime_source()
    version = iceberg_version(runtime)
    pyspark_jars = pyspark_jars_dir()
    asm = _one_jar(pyspark_jars, ASM_JAR)
    jackson = [_one_jar(pyspark_jars, a) for a in JACKSON_JARS]
    javac, java = java_tool("javac"), java_tool("java")
    source = relocate_source()
    if not source.is_file():
        raise BuildError(f"{source} is missing from the installation")
    dest.mkdir(parents=True, exist_ok=True)
    inputs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix=".build-", dir=dest) as tmp_name:
        tmp = Path(tmp_name)
        deb_records, hc_jars = [], []
        for deb in DEBS:
            path, record = obtain_deb(deb, debs_dir, dest / "debs", quiet, offline=offline)
            deb_records.append(record)
            extracted = extract_deb_jars(path, deb.jars, tmp / "deb-jars")
            hc_jars += extracted
            for jar in extracted:
                inputs.append({"name": jar.name, "from": f"{record['package']} {record['version']}", "sha256": sha256_file(jar)})
        for jar in [*jackson, asm]:
            inputs.append({"name": jar.name, "from": f"pyspark/jars ({jar.parent})", "sha256": sha256_file(jar)})
        inputs.append({"name": source.name, "from": "ctk/spark/relocate", "sha256": sha256_file(source)})

        _log(f"compiling {source.name}", quiet)
        classes = tmp / "classes"
        classes.mkdir()
        subprocess.run(
            [javac, "-nowarn", "-d", str(classes), "-cp", str(asm), str(source)],
            check=True, timeout=300, capture_output=True, text=True,
        )
        deps_name = DEPS_JAR.format(version=version)
        deps_tmp = tmp / deps_name
        cmd = [java, "-Xmx512m", "-cp", os.pathsep.join([str(asm), str(classes)]), "Relocate", str(deps_tmp)]
        for src, dst in RELOCATIONS.items():
            cmd += ["--map", f"{src}={dst}"]
        cmd += [str(p) for p in [*jackson, *hc_jars]]
        _log(f"relocating {len(jackson) + len(hc_jars)} jars into {deps_name}", quiet)
        proc = subprocess.run(cmd, timeout=600, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"Relocate failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
        _log(proc.stdout.strip(), quiet)

        runtime_tmp = tmp / runtime.name
        shutil.copyfile(runtime, runtime_tmp)
        missing = unresolved_references([runtime_tmp, deps_tmp])
        if missing:
            raise BuildError(
                f"{len(missing)} relocated classes referenced by the runtime are still missing, e.g. {missing[:5]}"
            )
        # the extensions jar of the same package is a subset of this runtime jar (checked at 1.10.2), so it is
        # not added: duplicate classes on the classpath would only invite confusion.
        jars = []
        for tmp_jar, role in ((runtime_tmp, "iceberg-spark-runtime"), (deps_tmp, "relocated-dependencies")):
            os.replace(tmp_jar, dest / tmp_jar.name)
            path = dest / tmp_jar.name
            jars.append({"name": path.name, "role": role, "size": path.stat().st_size, "sha256": sha256_file(path)})
        inputs.insert(0, {"name": runtime.name, "from": f"snowpark-connect-deps-iceberg ({runtime.parent})", "sha256": jars[0]["sha256"]})
    manifest = {
        "format": MANIFEST_FORMAT,
        "iceberg_version": version,
        "spark": SPARK_BINARY,
        "scala": SCALA_BINARY,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "build_seconds": round(time.monotonic() - started, 1),
        "relocations": RELOCATIONS,
        "classpath": [j["name"] for j in jars],
        "jars": jars,
        "debs": deb_records,
        "inputs": inputs,
    }
    tmp_manifest = dest / f".{MANIFEST}.tmp"
    tmp_manifest.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp_manifest, dest / MANIFEST)
    return manifest


def ensure_jars(dest: Path | None = None, debs_dir: Path | None = None, *, force: bool = False, quiet: bool = True) -> list[Path]:
    """The classpath, building it first when absent or altered (network only for the two .deb files)."""
    dest = Path(dest) if dest else default_jars_dir()
    if not force and not check_jars(dest, full=False):
        return classpath(dest)
    with _locked(dest):
        if force or check_jars(dest, full=False):
            build(dest, debs_dir, quiet=quiet, offline=offline_default())
    return classpath(dest)


# ----------------------------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dest", type=Path, default=None, help="cache dir (default: $CTK_SPARK_JARS or .ctk-cache/spark-jars)")
    parser.add_argument("--check", action="store_true", help="only verify the jars against manifest.json (SHA-256)")
    parser.add_argument("--debs", type=Path, default=None, help="dir with libhttpclient5-java_*.deb and libhttpcore5-java_*.deb (no download)")
    parser.add_argument("--offline", action="store_true", default=None,
                        help="never download (also $CTK_OFFLINE=1): the .deb files must be in --debs or the cache")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("Without --debs and without them in the cache, it downloads (and checks against the pinned "
                     "SHA-256):\n" + "\n".join("  " + line for line in downloads()) + "\nEverything else comes "
                     "from installed packages (pyspark, snowpark-connect-deps-iceberg) and the JDK.")
    parser.add_argument("--force", action="store_true", help="rebuild even when the cache is valid")
    parser.add_argument("--quiet", action="store_true")


def run(args: argparse.Namespace) -> int:
    dest = Path(args.dest).resolve() if args.dest else default_jars_dir()
    if args.check:
        problems = check_jars(dest, full=True)
        for problem in problems:
            print(f"FAIL {problem}")
        if not problems:
            m = _read_manifest(dest)
            for j in m["jars"]:
                print(f"ok   {j['sha256']}  {j['name']}")
        return 1 if problems else 0
    if not args.force and not check_jars(dest, full=True):
        print(f"up to date: {dest}")
        for p in classpath(dest):
            print(p)
        return 0
    started = time.monotonic()
    try:
        with _locked(dest):
            build(dest, args.debs, quiet=args.quiet, offline=bool(args.offline) or offline_default())
    except (BuildError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        detail = getattr(exc, "stderr", None)
        print(f"ctk spark-jars: {exc}{(': ' + detail.strip()[-2000:]) if detail else ''}", file=sys.stderr)
        return 1
    print(f"built in {time.monotonic() - started:.1f}s: {dest}")
    for p in classpath(dest):
        print(p)
    return 0
