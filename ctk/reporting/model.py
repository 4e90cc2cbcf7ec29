"""The run report: what was tested, against what, and every verdict, as one JSON-serialisable object.

The pytest plugin builds one ``RunReport`` per run and hands it to ``write_conformance``::

    report = RunReport.begin(target_url, name=None, options=vars_or_dict)
    report.set_server_info({...})                  # whatever the server told us (e.g. /_ctk, headers)
    report.set_discovery(discovery)                # a ctk.client Discovery (or a dict)
    report.add(verdict, nodeid, duration)          # once per verdict; outcome defaults from the status
    report.finish()
    write_conformance(report, "reports")           # reports/conformance.json + conformance.html

Summaries
---------
A requirement's summary status is the *worst* status among its results, in this order (worst first)::

    error > fail > deviation > inconclusive > pass > unsupported

Why this order is the honest one:

* ``error`` means a check crashed: its requirement went unjudged and the run itself failed, so it outranks
  everything (it is not evidence against the target, and the report says so).
* ``fail`` and ``deviation`` are evidence that a rule is broken; one counterexample is enough, however many
  other checks of the same requirement passed, so they dominate.
* ``inconclusive`` ranks above ``pass``: if one check of a requirement passed and another could not decide
  (timing, missing state), the requirement has not been shown to hold everywhere it was exercised;
  calling it "pass" would claim more than the kit knows.
* ``unsupported`` ranks lowest: it means the check did not apply (the target lacks a capability it
  assumes), so it carries no evidence either way. A requirement that passed where it applied is a pass;
  only a requirement whose every check was unsupported is summarised as unsupported.

A requirement with no results at all is "not run" (``None``) and never counted as a pass.

Nothing in the report carries secrets: the target URL loses its userinfo and secret-looking query
parameters, secret-looking options are replaced by ``<redacted>``, exchanges are re-redacted on ``add``
and ``Bearer`` tokens are scrubbed from messages.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ctk import __version__
from ctk.core.behaviours import Behaviour
from ctk.reporting.capabilities import capability_section
from ctk.core.requirements import REQUIREMENTS
from ctk.reporting.behaviour import behaviour_profile
from ctk.core.verdicts import Status, Verdict
from ctk.core.exchange import REDACTED, SECRET_FIELDS, Exchange

FORMAT = "ctk-conformance/1"

# The report keeps evidence, not archives. A finding (fail, deviation, error) keeps at most FINDING_EXCHANGES of
# its exchanges with bodies cut at FINDING_BODY characters; any other result (its classification is what the
# behaviour profile needs) at most OTHER_EXCHANGES, bodies cut at OTHER_BODY. Which ones: see cap_exchanges.
# Every cut is noted in the report. A run against one deviation stays around 2 MB of reports in all.
FINDING_EXCHANGES, FINDING_BODY, FINDING_DETAILS = 6, 600, 2500
OTHER_EXCHANGES, OTHER_BODY, OTHER_DETAILS = 1, 200, 1000
# The same finding on many endpoints (one rule broken everywhere): the first FULL_EVIDENCE_PER_KIND of a kind
# (requirement, classification) keep a finding's evidence, the others two exchanges, a message of
# REPEAT_MESSAGE characters and an ordinary result's details (the root cause groups them; the first ones show it).
FULL_EVIDENCE_PER_KIND = 2
REPEAT_EXCHANGES, REPEAT_MESSAGE, REPEAT_DETAILS = 1, 500, 300
BODY_LIMIT = FINDING_BODY
EXCHANGE_LIMIT = FINDING_EXCHANGES

# The kinds the summaries count (Result.kind): the statuses, with classified passes and the two sorts of
# unsupported ("not-applicable", "needs") apart. docs/verdicts.md explains each.
KINDS: tuple[str, ...] = ("error", "fail", "deviation", "inconclusive", "needs", "pass", "classified",
                          "not-applicable")
# names the kit makes unique per run or per case (ctk_1a2b3c4d_gw0, occ_race_2_27c7f9): folded when reasons are grouped
_RUN_UNIQUE = re.compile(r"\b\w*?_[0-9a-f]{6,}(?:_\w+)?\b|\b\d{4,}\b")
# what a user can change, as the checks' reasons name it (an option or a catalog property)
_OPTION = re.compile(r"(--(?:ctk|catalog)-[a-z-]+(?: [A-Za-z0-9_.:/=-]+)?)")
_OPTION_NAME = re.compile(r"(--(?:ctk|catalog)-[a-z-]*[a-z])(?: ([A-Za-z0-9_.:/=-]+))?")


def _unknown_commits(r: Any) -> int:
    """How many commits the check of a result saw answered 5xx or nothing under contention (its details'
    ``commit_state_unknown_count``, ctk.checks.concurrency)."""
    n = (r.details or {}).get("commit_state_unknown_count")
    return n if isinstance(n, int) and not isinstance(n, bool) else 0


def _option(text: str | None) -> str | None:
    """The option a hint or a need names first, without its value ("--ctk-max-wait 1620" -> "--ctk-max-wait";
    a catalog property keeps its name: "--catalog-property s3.endpoint"), so that the undecided entries one
    option would decide count together."""
    found = _OPTION_NAME.search(text or "")
    if not found:
        return None
    name, arg = found.group(1), found.group(2) or ""
    return f"{name} {arg.split('=', 1)[0]}" if "=" in arg else name


def _hint(reason: str) -> str | None:
    """The option a reason names ("pass --catalog-property s3.endpoint=..."), for the undecided list."""
    found = _OPTION.findall(reason or "")
    return ", ".join(dict.fromkeys(found)) if found else None


# What exit 7 means (ctk.plugin.exits), also the headline of a run that ends so (ctk.reporting.html.overall_text)
MUST_UNDECIDED = ("no MUST broken, but a MUST was left undecided that this setup could decide (a setup step failed, "
                  "a storage setting is missing): not a pass")

# Worst first. See the module docstring for why.
STATUS_ORDER: tuple[str, ...] = ("error", "fail", "deviation", "inconclusive", "pass", "unsupported")
_RANK = {s: i for i, s in enumerate(STATUS_ORDER)}

# pytest outcome the plugin gives each status (docs/architecture.md, Verdicts); used when add() gets none.
DEFAULT_OUTCOME = {
    "error": "failed",
    "pass": "passed",
    "fail": "failed",
    "deviation": "passed",
    "unsupported": "skipped",
    "inconclusive": "skipped",
}

_SECRET_OPTION = re.compile(SECRET_FIELDS.pattern + r"|auth|bearer|api[-_]?key", re.I)
_BEARER = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=:-]{4,}", re.I)
_URL_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s@]+@", re.I)


# --- redaction ------------------------------------------------------------------------------------


def redact_url(url: str | None) -> str | None:
    """Drop the userinfo (``user:password@``) and secret-looking query parameters of a URL."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return _URL_USERINFO.sub(r"\1" + REDACTED + "@", url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if _SECRET_OPTION.search(k) else v) for k, v in pairs], safe="<>")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def scrub_text(text: str | None) -> str | None:
    """Remove credentials that may have leaked into free text (messages, reasons)."""
    if not text:
        return text
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _URL_USERINFO.sub(r"\1" + REDACTED + "@", text)


def redact_options(options: Any) -> Any:
    """Options (e.g. pytest ``--ctk-*`` values) with secret-looking entries redacted, JSON-safe."""
    if isinstance(options, dict):
        out = {}
        for k, v in options.items():
            key = str(k)
            if _SECRET_OPTION.search(key) and v not in (None, "", False):
                out[key] = REDACTED
            else:
                out[key] = redact_options(v)
        return out
    if isinstance(options, (list, tuple, set)):
        return [redact_options(v) for v in options]
    if isinstance(options, str):
        if "://" in options:
            options = redact_url(options) or options
        return scrub_text(options)
    if options is None or isinstance(options, (bool, int, float)):
        return options
    return scrub_text(str(options))


def redact_exchange(ex: dict[str, Any] | Exchange) -> dict[str, Any]:
    """Redact an exchange again (defence in depth) and strip userinfo from its URL."""
    d = ex.to_dict() if isinstance(ex, Exchange) else Exchange(**ex).to_dict()
    d["url"] = redact_url(d.get("url")) or d.get("url")
    d["error"] = scrub_text(d.get("error"))
    return d


EXCHANGES_MARK = "\n\nexchanges:\n"


def strip_rendered_exchanges(message: str, has_exchanges: bool) -> str:
    """A check's message without the exchanges it rendered into it, when the result carries them anyway (the
    report prints each exchange once, from the result's exchanges)."""
    if has_exchanges and EXCHANGES_MARK in message:
        return message.split(EXCHANGES_MARK, 1)[0].rstrip()
    return message


def cap_body(text: str | None, limit: int = BODY_LIMIT) -> str | None:
    """``text`` cut to ``limit`` characters, with a note of how much was cut."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"… [cut: {len(text) - limit} of {len(text)} characters not kept in the report]"


# the key of a result's details that says what trimming cut, field by field
CUT_NOTE = "details_cut"
# a value whose JSON is at most this long is never trimmed: cutting it saves nothing worth a note, and the small
# fields are the ones the reports read (profiles, rule_broken, counts)
SMALL_VALUE = 80
NOTE_ROOM = 100      # of the limit, left for the note


def _size(value: Any) -> int:
    return len(json.dumps(value, default=str))


def cap_details(details: dict[str, Any], limit: int) -> dict[str, Any]:
    """``details`` whose JSON stays near ``limit`` characters: the largest values (e.g. a whole table history)
    are shortened, largest first, each keeping its type (a string is cut, a list keeps its first items, a dict
    its keys with shortened values, then its first keys; numbers, booleans and values of at most SMALL_VALUE
    characters are kept whole). ``details[CUT_NOTE]`` says, per field, how much was not kept."""
    sizes = {k: _size(v) for k, v in details.items()}
    total = sum(sizes.values())
    if total <= limit:
        return details
    out = dict(details)
    notes: dict[str, str] = {}
    limit -= NOTE_ROOM
    for key in sorted(sizes, key=sizes.__getitem__, reverse=True):
        over = total - limit
        if over <= 0 or sizes[key] <= SMALL_VALUE:
            break
        value = _shrink(out[key], max(SMALL_VALUE, sizes[key] - over))
        size = _size(value)
        if size >= sizes[key]:
            continue
        out[key] = value
        what = f"{len(details[key])} items, " if isinstance(details[key], (list, dict)) else ""
        notes[key] = f"{what}{sizes[key] - size} of {sizes[key]} characters not kept in the report"
        total -= sizes[key] - size
    if notes:
        out[CUT_NOTE] = notes
    return out


def _shrink(value: Any, budget: int) -> Any:
    """``value`` of the same type whose JSON is about ``budget`` characters at most (see cap_details)."""
    size = _size(value)
    if size <= budget or size <= SMALL_VALUE:
        return value
    if isinstance(value, str):
        return cap_body(value, max(0, budget - 60)) or ""
    if isinstance(value, list):
        kept: list[Any] = []
        used = 2
        for item in value:
            n = _size(item) + 1
            if used + n > budget:
                if not kept:
                    item = _shrink(item, budget - used - 1)
                    if _size(item) + used + 1 <= max(budget, SMALL_VALUE):
                        kept.append(item)
                break
            kept.append(item)
            used += n
        return kept
    if isinstance(value, dict):
        out = dict(value)
        parts = {k: _size(k) + _size(v) + 2 for k, v in out.items()}
        over = size - budget
        for k in sorted(parts, key=parts.__getitem__, reverse=True):
            if over <= 0:
                break
            v = _shrink(out[k], max(SMALL_VALUE, _size(out[k]) - over))
            over -= _size(out[k]) - _size(v)
            out[k] = v
        while over > 0 and out:            # many small entries: the first ones are kept
            k = next(reversed(out))
            over -= _size(k) + _size(out.pop(k)) + 2
        return out
    return value


# Variants of an operation that a request body selects: (operationId, body field, value, name). A finding whose
# requests of the operation all select one is about that variant (a staged create is not createTable at large).
OPERATION_VARIANTS: tuple[tuple[str, str, Any, str], ...] = (
    ("createTable", "stage-create", True, "stage-create"),
)
_NOT_THE_OPERATION = ("setup", "cleanup", "observe", "fault:", "interfere", "clear", "state", "read")


def operation_variant(endpoint: str | None, exchanges: list[Any]) -> str | None:
    """The variant (OPERATION_VARIANTS) every request of ``endpoint`` among ``exchanges`` selects - requests whose
    JSON body carries the variant's field, setup and cleanup steps aside - or None (the plain operation, both, or
    no such request). Read from the whole bodies, before the report cuts them."""
    for op, name, value, label in OPERATION_VARIANTS:
        if endpoint != op:
            continue
        seen: list[bool] = []
        for ex in exchanges:
            ex = ex.to_dict() if isinstance(ex, Exchange) else ex
            if not isinstance(ex, dict) or str(ex.get("label") or "").lower().startswith(_NOT_THE_OPERATION):
                continue
            try:
                body = json.loads(ex.get("request_body") or "")
            except (TypeError, ValueError):
                continue
            if isinstance(body, dict) and name in body:
                seen.append(body[name] == value)
        if seen and all(seen):
            return label
    return None


def _telling(ex: dict[str, Any]) -> bool:
    """An exchange that shows behaviour: it carries an Idempotency-Key, or got no answer or an error status."""
    status = ex.get("status")
    return (status is None or status >= 400
            or any(k.lower() == "idempotency-key" for k in (ex.get("request_headers") or {})))


def cap_exchanges(exchanges: list[dict[str, Any]], limit: int = EXCHANGE_LIMIT,
                  body_limit: int = BODY_LIMIT) -> tuple[list[dict[str, Any]], int]:
    """Exchanges without repeats, bodies cut at ``body_limit``; of more than ``limit``: the first and the last
    (from a limit of 4; the last from 2), then the latest without an answer or with an error status, the latest with an
    Idempotency-Key, the latest others; kept in their order. Also how many were left out."""
    unique: list[dict[str, Any]] = []
    seen: set[str] = set()
    for ex in exchanges:
        key = json.dumps(ex, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            unique.append(ex)
    n = len(unique)
    if n <= limit:
        kept = unique
    else:
        chosen = {0, n - 1} if limit >= 4 else ({n - 1} if limit >= 2 else set())   # one: the most telling
        failed = [i for i in range(n) if unique[i].get("status") is None or unique[i]["status"] >= 400]
        for i in failed[::-1] + [i for i in range(n) if _telling(unique[i])][::-1] + list(range(n - 1, -1, -1)):
            if len(chosen) >= limit:
                break
            chosen.add(i)
        kept = [unique[i] for i in sorted(chosen)]
    out = [{**ex, "request_body": cap_body(ex.get("request_body"), body_limit),
            "response_body": cap_body(ex.get("response_body"), body_limit),
            "request_headers": quiet_headers(ex.get("request_headers")),
            "response_headers": quiet_headers(ex.get("response_headers"))} for ex in kept]
    return out, len(exchanges) - len(kept)


# Headers every exchange carries, which tell nothing about a finding: left out of the report's exchanges (with
# the value that makes them ordinary; any other value is kept). About a tenth of a run's reports.
ORDINARY_HEADERS = {"date": None, "server": None, "content-length": None, "connection": "keep-alive",
                    "accept": "application/json", "content-type": "application/json", "x-ctk-scope": None,
                    "x-iceberg-access-delegation": "vended-credentials", "user-agent": None,
                    "accept-encoding": None, "host": None, "etag": None}


def quiet_headers(headers: Any) -> Any:
    """``headers`` without the ORDINARY_HEADERS (a header whose value is not the ordinary one is kept)."""
    if not isinstance(headers, dict):
        return headers
    out = {}
    for k, v in headers.items():
        usual = ORDINARY_HEADERS.get(str(k).lower(), "\0keep")
        if usual is None or (usual != "\0keep" and str(v).split(";")[0].strip().lower() == usual):
            continue
        out[k] = v
    return out


# --- results ----------------------------------------------------------------------------------------


@dataclass
class Result:
    """One verdict of one test: ``Verdict.to_dict()`` plus where it came from."""

    requirement: str
    level: str
    source: str
    statement: str
    status: str
    message: str
    endpoint: str | None = None
    behaviour: str | None = None
    classification: str | None = None
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    nodeid: str = ""
    duration: float = 0.0
    outcome: str = ""
    exchanges_cut: int = 0                  # exchanges of this result left out of the report (EXCHANGE_LIMIT)
    needs: str | None = None                # not decided by this setup: what would decide it (Verdict.needs)
    repeat: bool = False                    # a finding of a kind already shown in full (FULL_EVIDENCE_PER_KIND)
    worker: str | None = None               # the xdist worker that ran the test (gw0, gw1, ...), to reproduce it
    variant: str | None = None              # the variant of the operation its exchanges sent, where only one
                                            # (operation_variant: "stage-create")

    @property
    def kind(self) -> str:
        """The status as the summaries count it: a pass that only classifies a behaviour no source of the
        profile judges is "classified"; an unsupported result is "not-applicable", or "needs" (this setup
        could not decide it; ``needs`` says what would); an inconclusive one with ``needs`` is "needs" too."""
        if self.status == "pass" and is_classified(self):
            return "classified"
        if self.status in ("unsupported", "inconclusive") and self.needs:
            return "needs"
        if self.status == "unsupported":
            return "not-applicable"
        return self.status

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Result":
        known = {f for f in cls.__dataclass_fields__}
        d = dict(d)
        req = REQUIREMENTS.get(str(d.get("requirement")))
        for name in ("level", "source", "statement"):     # left out of conformance.json where the registry says it
            if name not in d:
                d[name] = getattr(req, name) if req is not None and name != "level" else (
                    req.level.value if req is not None else "")
        return cls(**{k: v for k, v in d.items() if k in known})

    def to_dict(self, compact: bool = False) -> dict[str, Any]:
        """As a dict; ``compact``: without the requirement's source and statement where the registry gives the
        same (conformance.json lists them once per requirement, under ``requirements``)."""
        d = asdict(self)
        req = REQUIREMENTS.get(self.requirement)
        if compact and req is not None:
            for name in ("source", "statement"):
                if d.get(name) == getattr(req, name):
                    del d[name]
        for name in ("worker", "variant"):
            if compact and d.get(name) is None:
                del d[name]
        return d


@dataclass
class RequirementSummary:
    requirement: str
    status: str | None                      # worst status, None when nothing ran
    counts: dict[str, int]                  # per status
    results: list[Result]


def requirement_kind(s: RequirementSummary) -> str | None:
    """A requirement's summary in the words of its checks' kinds (Result.kind): an unsupported requirement is
    "not-applicable", or "needs" when one of its checks names what would decide it; an inconclusive one whose
    every inconclusive check names a need is "needs"; a pass whose every pass is classified is "classified";
    otherwise its status (None: not run)."""
    if s.status == "unsupported":
        return "needs" if any(r.kind == "needs" for r in s.results) else "not-applicable"
    if s.status == "inconclusive":
        undecided = [r for r in s.results if r.status == "inconclusive"]
        return "needs" if undecided and all(r.kind == "needs" for r in undecided) else "inconclusive"
    if s.status == "pass":
        passes = [r for r in s.results if r.status == "pass"]
        return "classified" if passes and all(r.kind == "classified" for r in passes) else "pass"
    return s.status


def is_classified(r: Any) -> bool:
    """A pass that records a broken rule no source of the active profile judges (details.rule_broken, set by
    ctk.checks.judging and Verdict.broken), or a behaviour the sources leave open that a check names as such
    (details.classified, e.g. SEM-02's namespace properties not stored at create)."""
    details = (r.get("details") if isinstance(r, dict) else getattr(r, "details", None)) or {}
    return isinstance(details, dict) and (details.get("rule_broken") is True or details.get("classified") is True)


def worst(statuses: Iterable[str]) -> str | None:
    """The worst status of several (STATUS_ORDER), or None for none."""
    ranked = sorted((s for s in statuses if s in _RANK), key=_RANK.__getitem__)
    return ranked[0] if ranked else None


def _zero_counts() -> dict[str, int]:
    return {s: 0 for s in STATUS_ORDER}


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _jsonable(value: Any) -> Any:
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


#: where a /v1/config answer may say the catalog's version: the spec defines no field for it, so only these names
#: (top level, then under "defaults") are read, and only a short string is taken
VERSION_KEYS = ("catalog-version", "server-version", "version")


def config_version(config: Any) -> str | None:
    """The catalog's version as its /v1/config answer states it (VERSION_KEYS), else None."""
    if not isinstance(config, dict):
        return None
    for where in (config, config.get("defaults")):
        if not isinstance(where, dict):
            continue
        for key in VERSION_KEYS:
            value = where.get(key)
            if isinstance(value, str) and 0 < len(value.strip()) <= 80:
                return value.strip()
    return None


def discovery_summary(discovery: Any) -> dict[str, Any]:
    """A JSON summary of a ``ctk.client`` Discovery (attribute access) or a dict with the same keys.

    Only the fields below are kept (not the raw config, whose defaults/overrides may carry secrets); a
    dict may add further keys (e.g. ``in_flight``, ``payload_conflict``) which are kept as given.
    """
    if discovery is None:
        return {}
    get = discovery.get if isinstance(discovery, dict) else (lambda k, d=None: getattr(discovery, k, d))
    lifetime = get("lifetime")
    out = {
        "idempotency_supported": get("idempotency_supported"),
        "lifetime": lifetime.total_seconds() if isinstance(lifetime, timedelta) else lifetime,
        "lifetime_raw": get("lifetime_raw"),
        "lifetime_error": get("lifetime_error"),
        "misplaced_in": get("misplaced_in"),
        "java_parseable": get("java_parseable"),
        "endpoints": sorted(eps) if isinstance((eps := get("endpoints")), (set, frozenset)) else eps,
        "prefix": get("prefix"),
    }
    version = config_version(get("config"))
    if version:
        out["catalog_version"] = version
    if isinstance(discovery, dict):  # keep extra keys the caller chose to record
        out.update({k: v for k, v in discovery.items() if k not in out})
    return _jsonable(out)


# --- the report -------------------------------------------------------------------------------------


@dataclass
class RunReport:
    target_url: str | None = None
    target_name: str | None = None
    server_info: dict[str, Any] = field(default_factory=dict)
    discovery: dict[str, Any] = field(default_factory=dict)
    started_at: str = field(default_factory=_now_iso)
    finished_at: str | None = None
    kit_version: str = __version__
    options: dict[str, Any] = field(default_factory=dict)
    results: list[Result] = field(default_factory=list)
    state: str = "complete"                  # complete | interrupted | unusable-target
    problem: str | None = None               # why the target was unusable
    selection: dict[str, Any] = field(default_factory=dict)   # -k / -m / paths / deselected: a subset run
    cleanup_problems: list[str] = field(default_factory=list)
    catalog_version: str | None = None       # --ctk-catalog-version, else what /v1/config says (catalog_record)
    spec: dict[str, Any] = field(default_factory=dict)        # {version, sha256, file} of the OpenAPI document used
    changes: dict[str, Any] | None = None    # what changed since the last run in the same reports directory
    # --ctk-known-gaps / --ctk-certify (ctk.reporting.known_gaps, ctk.reporting.certification): the records
    known_gaps: dict[str, Any] | None = None          # {"file", "sha256", "entries": [... "state"]}
    new_findings: list[dict[str, Any]] | None = None  # findings the file does not list (None: no file)
    certification: dict[str, Any] | None = None       # {"requested", "certified", "why_not", ...}
    gaps_judged: Any = field(default=None, repr=False, compare=False)   # the live judgement (not serialised)
    _kinds: dict[tuple, int] = field(default_factory=dict, repr=False, compare=False)   # findings per kind

    def __post_init__(self) -> None:
        self.target_url = redact_url(self.target_url)
        self.options = redact_options(dict(self.options))

    # -- building ---------------------------------------------------------------------------------

    @classmethod
    def begin(cls, target_url: str | None, name: str | None = None, options: dict[str, Any] | None = None,
              started_at: str | None = None) -> "RunReport":
        """Start a report for ``target_url`` (credentials are removed from it), begun at ``started_at`` (now)."""
        rep = cls(target_url=target_url, target_name=name, options=dict(options or {}))
        if started_at:
            rep.started_at = started_at
        return rep

    def set_server_info(self, info: dict[str, Any]) -> None:
        """Record what the server reported about itself (redacted, JSON-safe)."""
        self.server_info = redact_options(_jsonable(dict(info or {})))

    def set_discovery(self, discovery: Any) -> None:
        """Record the discovery result: a ``Discovery`` object or a dict (see ``discovery_summary``)."""
        self.discovery = redact_options(discovery_summary(discovery))

    def add(self, verdict: Verdict | dict[str, Any], nodeid: str, duration: float = 0.0,
            outcome: str | None = None) -> Result:
        """Record one verdict of test ``nodeid``; ``outcome`` defaults from the status (DEFAULT_OUTCOME)."""
        d = verdict.to_dict() if isinstance(verdict, Verdict) else dict(verdict)
        status = d["status"].value if isinstance(d.get("status"), Status) else str(d["status"])
        if status not in _RANK:
            raise ValueError(f"unknown verdict status {status!r}; expected one of {', '.join(STATUS_ORDER)}")
        d["status"] = status
        d["message"] = strip_rendered_exchanges(scrub_text(d.get("message") or "") or "", bool(d.get("exchanges")))
        finding = status in ("fail", "deviation", "error")
        repeat = False
        if finding:
            kind = (d.get("requirement"), d.get("classification"))
            seen = self._kinds.get(kind, 0)
            self._kinds[kind] = seen + 1
            finding = seen < FULL_EVIDENCE_PER_KIND
            repeat = not finding
        if repeat and len(d["message"]) > REPEAT_MESSAGE:
            d["message"] = cap_body(d["message"], REPEAT_MESSAGE) or ""
        d["variant"] = d.get("variant") or operation_variant(d.get("endpoint"), d.get("exchanges") or [])
        d["exchanges"], d["exchanges_cut"] = cap_exchanges(
            [redact_exchange(x) for x in d.get("exchanges") or []],
            FINDING_EXCHANGES if finding else (REPEAT_EXCHANGES if repeat else OTHER_EXCHANGES),
            FINDING_BODY if finding else OTHER_BODY)
        d["details"] = cap_details(redact_options(_jsonable(d.get("details") or {})),
                                   FINDING_DETAILS if finding else (REPEAT_DETAILS if repeat else OTHER_DETAILS))
        d["classification"] = scrub_text(d.get("classification"))
        result = Result.from_dict({**d, "nodeid": nodeid, "duration": float(duration or 0.0),
                                   "outcome": outcome or DEFAULT_OUTCOME[status], "repeat": repeat})
        self.results.append(result)
        return result

    def finish(self) -> None:
        self.finished_at = _now_iso()

    # -- summaries --------------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """How many results have each status."""
        c = _zero_counts()
        for r in self.results:
            c[r.status] += 1
        return c

    def summary(self) -> dict[str, RequirementSummary]:
        """Per requirement id (registry order, then unknown ids): worst status and counts per status."""
        by_req: dict[str, list[Result]] = {rid: [] for rid in REQUIREMENTS}
        for r in self.results:
            by_req.setdefault(r.requirement, []).append(r)
        out = {}
        for rid, results in by_req.items():
            c = _zero_counts()
            for r in results:
                c[r.status] += 1
            out[rid] = RequirementSummary(rid, worst(r.status for r in results), c, results)
        return out

    def kind_counts(self) -> dict[str, int]:
        """How many results of each kind (``Result.kind``): plain passes apart from classified ones, not
        applicable apart from not decided for want of something this setup lacks ("needs")."""
        c = {k: 0 for k in KINDS}
        for r in self.results:
            c[r.kind] = c.get(r.kind, 0) + 1
        return c

    def root_causes(self) -> list[Any]:
        """The findings grouped by the broken rule that explains them, first the one to fix first
        (ctk.reporting.rootcause)."""
        from ctk.reporting.rootcause import root_causes

        return root_causes(self.results)

    def undecided(self) -> list[dict[str, Any]]:
        """What was left undecided and what would decide it: one entry per distinct ``needs`` (this setup cannot
        observe it) and per distinct reason of the inconclusive results without one (a setup step failed, a
        storage setting is missing, a request timed out, ...). Each names the ``option`` that would decide it
        where one does and ``must_checks``: how many MUST results that one option would decide over the whole run
        (its entry's own MUST results where it names none). Ordered by ``must_checks``, then those that name an
        option, MUSTs first, then the most results: the first line is the change that decides the most."""
        groups: dict[tuple[str, str], dict[str, Any]] = {}
        for r in self.results:
            if r.kind not in ("needs", "inconclusive"):
                continue
            if r.kind == "needs":
                key, what = ("needs", r.needs or ""), r.needs or ""
            elif isinstance(r.details, dict) and r.details.get("blocked_by"):
                # rests on a broken plain operation (issue 28): decided once that finding is fixed
                what = (f"decided once {r.details['blocked_by']} is fixed: the plain operation it judges is broken "
                        "and these verdicts rest on it")
                key = ("inconclusive", what)
            else:
                first = strip_rendered_exchanges(r.message or "", True).strip().splitlines()
                what = first[0] if first else "(no reason given)"
                key = ("inconclusive", _RUN_UNIQUE.sub("<name>", what))
            g = groups.get(key)
            if g is None:
                hint = self._timeout_hint(r, what) or _hint(what) if key[0] == "inconclusive" else None
                g = groups[key] = {"kind": key[0], "what": what, "hint": hint, "option": _option(hint or what),
                                   "count": 0, "requirements": {}, "must": False, "must_results": 0}
            g["count"] += 1
            g["requirements"][r.requirement] = g["requirements"].get(r.requirement, 0) + 1
            g["must"] = g["must"] or r.level == "MUST"
            g["must_results"] += r.level == "MUST"
        by_option: dict[str, int] = {}
        for g in groups.values():
            if g["option"]:
                by_option[g["option"]] = by_option.get(g["option"], 0) + g["must_results"]
        for g in groups.values():
            g["must_checks"] = by_option[g["option"]] if g["option"] else g["must_results"]
            del g["must_results"]
        return sorted(groups.values(), key=lambda g: (-g["must_checks"], not g["option"], not g["must"],
                                                      g["kind"] != "inconclusive", -g["count"]))

    def _timeout_hint(self, r: Result, what: str) -> str | None:
        """For a result whose request got no answer in time (the client's "timeout: ..." error): the option that
        gives requests longer, with the time they had."""
        timed_out = "(timeout: " in what or any(str(x.get("error") or "").startswith("timeout:")
                                               for x in r.exchanges)
        if not timed_out:
            return None
        t = self.options.get("timeout") if isinstance(self.options, dict) else None
        had = f" (a request got no answer in {t:g} s)" if isinstance(t, (int, float)) else ""
        return f"a larger --ctk-timeout{had}"

    def attention(self) -> list[dict[str, Any]]:
        """What needs a reader's attention besides the findings: commits answered 5xx or nothing while several
        writers contended (commit state unknown to a client: not a conflict, not a success), counted over the
        run with the requirements whose checks saw them."""
        notes: list[dict[str, Any]] = []
        total, reqs = 0, dict[str, int]()
        for r in self.results:
            n = _unknown_commits(r)
            if n:
                total += n
                reqs[r.requirement] = reqs.get(r.requirement, 0) + n
        if total:
            notes.append({"what": "commit state unknown under contention", "count": total, "requirements": reqs,
                          "why": "commits answered 5xx or nothing while other writers committed to the same "
                                 "table: a client cannot tell whether they landed (CommitStateUnknown); the checks "
                                 "counted them neither as win nor as conflict"})
        return notes

    def undecided_musts(self, skip: Iterable[int] = ()) -> list[str]:
        """MUST requirements with an inconclusive result that names nothing this setup lacks (a setup that
        failed, a missing storage setting): the run's exit code is 7 for them when nothing failed. ``skip``:
        indexes of results not counted (known gaps)."""
        left = set(skip)
        return sorted({r.requirement for i, r in enumerate(self.results)
                       if r.kind == "inconclusive" and r.level == "MUST" and i not in left})

    def not_run_reason(self, requirement: str) -> str:
        """Why no check of `requirement` has a result here (ctk.reporting.judged)."""
        from ctk.reporting.judged import not_run_reason

        return not_run_reason(requirement, self.options, self.state, self.selection)

    def requirement_counts(self) -> dict[str, int]:
        """How many requirements have each summary status, plus "not-run"."""
        c = _zero_counts()
        c["not-run"] = 0
        for s in self.summary().values():
            c[s.status or "not-run"] += 1
        return c

    def requirement_kinds(self) -> dict[str, int]:
        """How many requirements have each summary kind (requirement_kind), plus "not-run": the words the pages
        and the terminal use for checks, said of requirements."""
        c = {k: 0 for k in KINDS}
        c["not-run"] = 0
        for s in self.summary().values():
            k = requirement_kind(s) or "not-run"
            c[k] = c.get(k, 0) + 1
        return c

    def overall(self) -> str | None:
        """The worst status of the run, or None when nothing ran."""
        return worst(r.status for r in self.results)

    @property
    def subset(self) -> bool:
        """The user narrowed the run (-k, -m, paths, deselected tests)."""
        return bool(self.selection)

    @property
    def partial(self) -> bool:
        """Not every check ran: a subset, an interrupted run or an unusable target."""
        return self.subset or self.state != "complete"

    def overall_claim(self) -> str | None:
        """The overall verdict the report may claim. A partial run claims only what it found broken (fail,
        deviation): its passes say nothing about the requirements it did not run, so otherwise None."""
        found = self.overall()
        if self.state == "unusable-target":
            return None
        if self.partial and found not in ("fail", "deviation"):
            return None
        return found

    def requirements_run(self) -> int:
        """How many registry requirements have at least one result."""
        return sum(1 for s in self.summary().values() if s.status is not None)

    def matrix(self) -> dict[str, dict[str, dict[str, Any]]]:
        """endpoint -> behaviour -> {status, classifications, requirements, count} for results that name both."""
        cells: dict[str, dict[str, list[Result]]] = {}
        for r in self.results:
            if r.endpoint and r.behaviour:
                cells.setdefault(r.endpoint, {}).setdefault(r.behaviour, []).append(r)
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for ep in sorted(cells):
            out[ep] = {}
            for bh, rs in cells[ep].items():
                out[ep][bh] = {
                    "status": worst(r.status for r in rs),
                    "classifications": _unique(r.classification for r in rs),
                    "requirements": _unique(r.requirement for r in rs),
                    "count": len(rs),
                }
        return out

    def behaviours(self) -> dict[str, dict[str, Any]]:
        """Classifications observed per behaviour across endpoints, e.g. in-flight-duplicate -> {"wait-and-replay": 3}."""
        out: dict[str, dict[str, Any]] = {}
        for r in self.results:
            if r.behaviour and r.classification:
                per = out.setdefault(r.behaviour, {})
                per[r.classification] = per.get(r.classification, 0) + 1
        return out

    def discovery_view(self) -> dict[str, Any]:
        """Discovery plus the observed in-flight behaviour and payload-conflict classification.

        Taken from the classifications of INFLIGHT-01 / PAYLOAD-01 results (else of any result with the
        behaviour in-flight-duplicate / payload-mismatch), e.g. "409 (updateTable); wait-and-replay (createTable)".
        Values the caller put into ``discovery`` under ``in_flight`` / ``payload_conflict`` win.
        """
        d = dict(self.discovery)
        for key, behaviour, req in (("in_flight", Behaviour.IN_FLIGHT_DUPLICATE, "INFLIGHT-01"),
                                    ("payload_conflict", Behaviour.PAYLOAD_MISMATCH, "PAYLOAD-01")):
            if d.get(key):
                continue
            chosen = [r for r in self.results if r.requirement == req and r.classification]
            if not chosen:
                chosen = [r for r in self.results if r.behaviour == behaviour and r.classification]
            # an endpoint is listed once: under what was observed, not also under "could not observe" (an
            # inconclusive result's classification) when another check of it decided
            decided = {r.endpoint for r in chosen if r.status not in ("inconclusive", "unsupported")}
            seen: dict[str, list[str]] = {}
            for r in chosen:
                if r.status in ("inconclusive", "unsupported") and r.endpoint in decided:
                    continue
                eps = seen.setdefault(r.classification or "", [])
                if r.endpoint and r.endpoint not in eps:
                    eps.append(r.endpoint)
            if len(seen) == 1:
                d[key] = next(iter(seen))
            elif seen:
                d[key] = "; ".join(f"{c} ({', '.join(eps)})" if eps else c for c, eps in seen.items())
        return d

    @property
    def label(self) -> str:
        """A short name for the run (target name, else URL, else "run")."""
        return self.target_name or self.target_url or "run"

    @property
    def duration_s(self) -> float:
        return sum(r.duration for r in self.results)

    # -- JSON ---------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        summary = self.summary()
        record = {
            "format": FORMAT,
            "kit_version": self.kit_version,
            "catalog": self.catalog_record(),
            "kit": {"version": self.kit_version},
            "spec": {"version": self.spec.get("version"), "sha256": self.spec.get("sha256"),
                     **({"file": self.spec["file"]} if self.spec.get("file") else {})},
            "target": {
                "url": self.target_url,
                "name": self.target_name,
                "server_info": self.server_info,
                "discovery": self.discovery,
                "observed": {k: v for k, v in self.discovery_view().items()
                             if k in ("in_flight", "payload_conflict") and v},
            },
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "options": self.options,
            "state": self.state,
            "problem": scrub_text(self.problem),
            "selection": self.selection,
            "subset": self.subset,
            "cleanup_problems": self.cleanup_problems,
            "overall": self.overall_claim(),
            "worst_observed": self.overall(),
            "counts": self.counts(),
            "kinds": self.kind_counts(),
            "requirement_counts": self.requirement_counts(),
            "requirement_kinds": self.requirement_kinds(),
            "tests": len({r.nodeid for r in self.results}),
            "requirements_run": self.requirements_run(),
            "undecided_musts": self.undecided_musts(),
            "root_causes": [{**rc.to_dict(), "line": rc.line()} for rc in self.root_causes()],
            "catalog_capabilities": capability_section(self.results),
            "undecided": self.undecided(),
            "attention": self.attention(),
            "status_order": list(STATUS_ORDER),
            "requirements": {
                rid: {"status": s.status, "kind": requirement_kind(s), "counts": s.counts,
                      **({"level": REQUIREMENTS[rid].level.value, "source": REQUIREMENTS[rid].source,
                          "statement": REQUIREMENTS[rid].statement, "area": REQUIREMENTS[rid].area}
                         if rid in REQUIREMENTS else {}),
                      **({"not_run": self.not_run_reason(rid)} if s.status is None else {})}
                for rid, s in summary.items()
            },
            "matrix": self.matrix(),
            "known_gaps": self.known_gaps,
            "new_findings": self.new_findings,
            "certification": self.certification,
            "behaviour_profile": behaviour_profile(self.results),
            "results": [{**r.to_dict(compact=True), "kind": r.kind} for r in self.results],
        }
        if self.changes is not None:
            record["changes"] = self.changes
        return record

    def catalog_record(self) -> dict[str, Any]:
        """The catalog tested, as a matrix names it: ``name`` (--ctk-catalog-name, else the target URL) and
        ``version`` (--ctk-catalog-version, else what /v1/config said, else null), with where the version came
        from."""
        from_config = self.discovery.get("catalog_version") if isinstance(self.discovery, dict) else None
        version = self.catalog_version or from_config
        source = "option" if self.catalog_version else ("/v1/config" if from_config else None)
        return {"name": self.target_name or self.target_url or "run", "version": version, "version_source": source}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, sort_keys=False, default=str,
                          separators=(",", ":") if indent is None else None)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunReport":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"not a ctk conformance report (expected format {FORMAT!r}, found {found!r})")
        t = data.get("target") or {}
        catalog = data.get("catalog") or {}
        rep = cls(
            target_url=t.get("url"), target_name=t.get("name"),
            server_info=t.get("server_info") or {}, discovery=t.get("discovery") or {},
            started_at=data.get("started_at") or "", finished_at=data.get("finished_at"),
            kit_version=data.get("kit_version") or "", options=data.get("options") or {},
            state=data.get("state") or "complete", problem=data.get("problem"),
            selection=data.get("selection") or {}, cleanup_problems=data.get("cleanup_problems") or [],
            catalog_version=catalog.get("version") if catalog.get("version_source") == "option" else None,
            spec=dict(data.get("spec") or {}), changes=data.get("changes"),
            known_gaps=data.get("known_gaps"), new_findings=data.get("new_findings"),
            certification=data.get("certification"),
        )
        rep.results = [Result.from_dict(r) for r in data.get("results") or []]
        return rep

    @classmethod
    def from_json(cls, text: str) -> "RunReport":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not a ctk conformance report (invalid JSON: {exc})") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str) -> "RunReport":
        with open(path, encoding="utf-8") as f:
            return cls.from_json(f.read())

    def save(self, path: str) -> str:
        """Write the report to ``path``: made whole first, then renamed over it (never a partial file)."""
        import os

        text = self.to_json() + "\n"
        tmp = f"{path}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
        return path


def as_record(report: "RunReport | dict[str, Any]") -> dict[str, Any]:
    """The record of a run (what conformance.json holds, ``RunReport.to_dict()``): made once from a RunReport,
    taken as it is when already one. Every page renders this and nothing else."""
    return report.to_dict() if isinstance(report, RunReport) else report


def _unique(values: Iterable[str | None]) -> list[str]:
    out: list[str] = []
    for v in values:
        if v and v not in out:
            out.append(v)
    return out
