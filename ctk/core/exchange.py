"""One recorded HTTP exchange (request, response or transport error), with secrets redacted."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

REDACTED = "<redacted>"
SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-iceberg-access-delegation-token"}
# Keys inside JSON or form bodies whose values are secrets.
SECRET_FIELDS = re.compile(r"(token|secret|password|credential|authorization|client_secret|access[-_]key)", re.I)


def redact_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if k.lower() in SECRET_HEADERS or SECRET_FIELDS.search(k) else v) for k, v in headers.items()}


def redact_text(text: str | None) -> str | None:
    """Redact secret values in a JSON or form-encoded body; other text is returned as is."""
    if not text:
        return text
    if not SECRET_FIELDS.search(text) and "\\u" not in text:
        # no field name that could hold a secret (nor an escape that could spell one): nothing to redact, and the
        # body stays as sent (parsing and writing again every table's metadata was most of the report's cost)
        return text
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return re.sub(r"((?:%s)[^=&]*=)[^&\s]*" % SECRET_FIELDS.pattern[1:-1], r"\1" + REDACTED, text, flags=re.I)
    return json.dumps(_redact_json(data), separators=(",", ":"))


def _redact_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (REDACTED if isinstance(k, str) and SECRET_FIELDS.search(k) and not isinstance(v, (dict, list)) else _redact_json(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(v) for v in value]
    return value


@dataclass
class Exchange:
    method: str
    url: str
    request_headers: dict[str, str] = field(default_factory=dict)
    request_body: str | None = None
    status: int | None = None                 # None when no response arrived
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str | None = None
    error: str | None = None                  # transport error (timeout, reset, refused), if any
    started_at: float = 0.0                   # time.time()
    elapsed_ms: float = 0.0
    label: str | None = None                  # what the kit meant by it, e.g. "first attempt"
    dropped: list[str] = field(default_factory=list)  # earlier tries of this read lost on a dropped connection

    def redacted(self) -> "Exchange":
        return Exchange(
            self.method, self.url, redact_headers(self.request_headers), redact_text(self.request_body),
            self.status, redact_headers(self.response_headers), redact_text(self.response_body),
            self.error, self.started_at, self.elapsed_ms, self.label, list(self.dropped),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self.redacted())

    def json(self) -> Any:
        """The response body parsed as JSON, or None."""
        if not self.response_body:
            return None
        try:
            return json.loads(self.response_body)
        except ValueError:
            return None

    def render(self, limit: int = 2000) -> str:
        """Human-readable, redacted text for failure messages."""
        e = self.redacted()
        out = [f"--> {e.method} {e.url}" + (f"   [{e.label}]" if e.label else "")]
        out += [f"    (sent again: try {i} lost on a dropped connection: {why})" for i, why in enumerate(e.dropped, 1)]
        out += [f"    {k}: {v}" for k, v in e.request_headers.items()]
        if e.request_body:
            out.append("    " + _clip(e.request_body, limit))
        if e.error:
            out.append(f"<-- no response: {e.error} ({e.elapsed_ms:.0f} ms)")
        else:
            out.append(f"<-- {e.status} ({e.elapsed_ms:.0f} ms)")
            out += [f"    {k}: {v}" for k, v in e.response_headers.items()
                    if k.lower() in ("content-type", "retry-after", "idempotency-key", "location")]
            if e.response_body:
                out.append("    " + _clip(e.response_body, limit))
        return "\n".join(out)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def render_exchanges(exchanges: list[dict[str, Any]] | list[Exchange], limit: int = 2000) -> str:
    items = [e if isinstance(e, Exchange) else Exchange(**e) for e in exchanges]
    return "\n\n".join(x.render(limit) for x in items)
