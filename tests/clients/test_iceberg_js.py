"""iceberg-js 1.0.0 (npm) against `ctk serve`, run with node: namespaces, a partitioned and sorted table, the
conditional load (ETag, 304), a stale commit's 409 and its retry, rename and drops. The script
(iceberg_js_round_trip.mjs) reports what it observed as JSON; the assertions are here."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from required import require

from clients import node_client

pytestmark = pytest.mark.timeout(600)

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "iceberg_js_round_trip.mjs"


@pytest.fixture(scope="module")
def iceberg_js():
    """(node, entry file of iceberg-js), installed into the cache on first use."""
    try:
        return node_client.node(), node_client.ensure_iceberg_js()
    except node_client.InstallUnavailable as exc:
        require("iceberg-js", str(exc))


def test_round_trip(iceberg_js, served, pyiceberg_catalog):
    node, entry = iceberg_js
    done = subprocess.run([node, str(SCRIPT), str(entry), served.url, "js", "lane"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "CATALOG_TOKEN": served.secret})
    assert done.returncode == 0, f"node exited {done.returncode}:\n{done.stderr[-3000:]}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    assert seen["prefix"] == f"v1/{served.prefix}"                  # from /v1/config overrides
    assert seen["children"] == [["js", "sub"]]
    assert seen["properties"] == {"owner": "js"}
    assert seen["updated"] == {"updated": ["team"], "removed": ["owner"], "missing": ["absent"]}
    assert seen["propertiesAfter"] == {"team": "lane"}
    assert seen["nsExists"] == [True, False]
    assert seen["nsDuplicate"]["status"] == 409 and seen["nsDuplicate"]["type"] == "AlreadyExistsException"

    created, loaded = seen["created"], seen["loaded"]
    assert created["spec"] == [["kind"]] and created["order"] == 1
    assert seen["tables"] == ["events"] and seen["tableExists"] == [True, False]
    assert loaded["location"] == created["location"]
    assert loaded["etag"] and created["etag"] == loaded["etag"]

    assert seen["conditionalUnchanged"] is None                      # 304 Not Modified
    changed = seen["conditionalChanged"]
    assert changed is not None, "a load with the old ETag after a commit must answer the new metadata"
    assert changed["location"] == seen["committed"]["location"] != loaded["location"]
    assert changed["etag"] != loaded["etag"] and changed["props"]["commit.by"] == "js"

    stale = seen["staleCommit"]
    assert stale["raised"] and stale["status"] == 409 and stale["conflict"], stale
    assert stale["type"] == "CommitFailedException"
    assert seen["retried"] == {"schemaId": 1, "stale": "no", "columns": ["id", "kind", "note"]}
    assert seen["ifNotExists"] == loaded["uuid"]
    assert seen["tableDuplicate"]["status"] == 409

    assert seen["afterRename"] == {"old": False, "moved": ["moved"]}
    assert seen["nsNotEmpty"]["status"] == 409 and seen["nsNotEmpty"]["type"] == "NamespaceNotEmptyException"
    assert seen["loadDropped"]["status"] == 404 and seen["loadDropped"]["notFound"]
    assert seen["nsGone"] is False
    # what iceberg-js did is what another client sees
    assert ("js",) not in pyiceberg_catalog.list_namespaces()
    assert len(seen["steps"]) == 22                                  # every step ran and reported


def _fake_npm(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_install_failure_says_what_npm_said(tmp_path):
    npm = _fake_npm(tmp_path / "npm", "echo 'npm error 404 Not Found - GET iceberg-js' >&2\nexit 1\n")
    with pytest.raises(node_client.InstallUnavailable, match=r"failed \(exit 1\):\nnpm error 404 Not Found"):
        node_client.ensure_iceberg_js(tmp_path / "cache", npm=npm)


def test_install_that_installs_nothing_is_a_failure(tmp_path):
    npm = _fake_npm(tmp_path / "npm", "exit 0\n")
    with pytest.raises(node_client.InstallUnavailable, match="exited 0, but .* holds no version 1.0.0"):
        node_client.ensure_iceberg_js(tmp_path / "cache", npm=npm)


def test_cached_install_is_reused_without_npm(tmp_path):
    entry = tmp_path / "cache" / "iceberg-js" / "node_modules" / "iceberg-js" / "dist" / "index.mjs"
    entry.parent.mkdir(parents=True)
    entry.write_text("export {};\n")
    (entry.parent.parent / "package.json").write_text(json.dumps({"name": "iceberg-js", "version": "1.0.0"}))
    npm = _fake_npm(tmp_path / "npm", "exit 7\n")            # would fail if it were called
    assert node_client.ensure_iceberg_js(tmp_path / "cache", npm=npm) == entry
    assert not os.path.exists(tmp_path / "cache" / "iceberg-js" / "package.json")
