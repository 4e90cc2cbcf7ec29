"""SCHEMA-01's all-traffic verdict shows every problem, grouped by operation and problem (not the first 8)."""

from __future__ import annotations

from ctk.plugin import traffic


def _summary(worker: str, problems: list[str]) -> dict:
    out = {"worker": worker, "checked": 400, "problems": [], "problem_count": 0, "groups": {}}
    for p in problems:
        out["problem_count"] += 1
        key = traffic.group_key(p)
        if key not in out["groups"] and len(out["problems"]) < traffic.MAX_PROBLEMS:
            out["problems"].append([p, {"method": "GET", "url": "http://127.0.0.1:1/v1/x", "status": 200}])
        out["groups"][key] = out["groups"].get(key, 0) + 1
    return out


def test_every_problem_by_operation_and_problem():
    a = [f"POST /v1/namespaces -> 201 (createNamespace): status 201 is not declared (declared: 200, 400)"] * 100
    b = [f"GET /v1/namespaces/ctk_1a2b3c4d{i:04d}/tables/t -> 200 (loadTable): metadata/format-version: "
         f"{i} is not one of [1, 2, 3]" for i in range(40)]
    c = ["DELETE /v1/namespaces/n -> 200 (dropNamespace): status 200 is not declared (declared: 204)"] * 15
    v = traffic.verdict([_summary("gw0", a[:60] + b[:20]), _summary("gw1", a[60:] + b[20:] + c)])
    assert v is not None and v.details["problems"] == 155
    groups = v.details["by_operation"]
    assert sum(n for per in groups.values() for n in per.values()) == 155
    assert list(groups) == ["createNamespace", "loadTable", "dropNamespace"]     # most problems first
    assert groups["createNamespace"] == {"-> 201: status 201 is not declared (declared: 200, 400)": 100}
    assert sum(groups["loadTable"].values()) == 40
    for line in ("createNamespace: 100", "  100x -> 201: status 201 is not declared", "loadTable: 40",
                 "dropNamespace: 15", "  15x -> 200: status 200 is not declared (declared: 204)"):
        assert line in v.message, v.message
    assert len(v.exchanges) <= traffic.MAX_PROBLEMS


def _exchange(url: str, status: int, body: str):
    from ctk.core.exchange import Exchange

    return Exchange("GET", url, status=status, response_headers={"content-type": "application/json"},
                    response_body=body)


def test_behind_a_base_path_responses_are_matched_and_none_matched_is_no_pass():
    """Issue 34 item 5: behind http://host/iceberg SCHEMA-01 passed "513 responses conform" having matched none
    of them to a path of the document. Now a base path is matched from /v1/ on, and a run whose responses match
    no operation is inconclusive saying so, in the per-test verdict and the all-traffic one."""
    from types import SimpleNamespace

    from ctk.core.verdicts import Status
    from ctk.openapi import load_spec
    from ctk.suites.test_schema import _verdict

    spec = load_spec(None)
    config = _exchange("http://127.0.0.1:1/iceberg/v1/config", 200, '{"defaults": {}, "overrides": {}}')
    bad = _exchange("http://127.0.0.1:1/iceberg/v1/config", 200, '{"defaults": 3}')
    assert spec.operation("GET", config.url) is not None
    assert _verdict(spec, [config], "base path").status is Status.PASS
    assert _verdict(spec, [config, bad], "base path").status is Status.DEVIATION     # held to the schema (SHOULD)
    stray = [_exchange(f"http://127.0.0.1:1/elsewhere/{i}", 200, "{}") for i in range(3)]
    v = _verdict(spec, stray, "unknown paths")
    assert v.status is Status.INCONCLUSIVE and "none of 3 responses matched an operation" in v.message, v.message
    session = SimpleNamespace(worker="gw0", client=SimpleNamespace(exchanges=stray), discovery=None)
    all_traffic = traffic.verdict([traffic.summarize(session, None)])
    assert all_traffic is not None and all_traffic.status is Status.INCONCLUSIVE, all_traffic
    assert "none of 3 responses matched" in all_traffic.message, all_traffic.message
