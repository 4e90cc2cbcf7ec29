"""Reading a probe that decides what the kit can do (the control API's ``GET /_ctk``, discovery's
``GET /v1/config``): one unreadable answer on a busy runner must not turn a feature into "absent".

`probe_read` sends the read again, at most ``tries`` times in all, while the answer is a 5xx, a timeout or a
dropped connection (what a loaded server or a closed keep-alive gives); any other answer (a 200, a 404, a 401)
is the target's word and is taken at once. Every attempt is an exchange of the client (so in the report) and
is returned; `unread` says, in words, why the last one could not be read ("probe failed: ..." verdicts quote it).
"""

from __future__ import annotations

import time
from typing import Any

from ctk.client.transport import error_kind
from ctk.core.exchange import Exchange

PROBE_TRIES = 4               # a count, never a time: the same tries on a busy machine as on a quiet one
RETRY_AFTER_CAP = 1.0         # a Retry-After the target sends is honoured up to this many seconds


def unreadable(ex: Exchange) -> bool:
    """An answer that says nothing about the target's features: a 5xx, or no answer (timeout, reset, dropped)."""
    return ex.status is None or ex.status >= 500


def _pause(ex: Exchange) -> float:
    ra = (ex.response_headers or {}).get("retry-after") or (ex.response_headers or {}).get("Retry-After")
    try:
        return max(0.0, min(float(ra), RETRY_AFTER_CAP)) if ra is not None else 0.0
    except ValueError:
        return 0.0


def probe_read(client: Any, path: str, label: str, params: dict[str, Any] | None = None,
               tries: int = PROBE_TRIES) -> list[Exchange]:
    """GET ``path`` until its answer is readable (see `unreadable`), at most ``tries`` times; every attempt's
    exchange, the last one the answer: at most ``tries`` requests in all."""
    out: list[Exchange] = []
    for n in range(1, max(1, tries) + 1):
        # read_retries=0: this loop is the one retry of a probe (a dropped connection is one unreadable try),
        # so a probe sends at most ``tries`` requests, not tries x the transport's own READ_RETRIES
        ex = client.request("GET", path, params=params, read_retries=0,
                            label=label if n == 1 else f"{label} (try {n} of {tries}: the last was unreadable)")
        out.append(ex)
        if not unreadable(ex) or n == tries:
            break
        pause = _pause(ex)
        if pause:
            time.sleep(pause)   # the target asked for it (Retry-After), capped; no pause of the kit's own
    return out


def unread(attempts: list[Exchange]) -> str | None:
    """Why the probe could not be read ("GET /_ctk: 503, 503, timeout after 4 tries"), None when it was."""
    if not attempts or not unreadable(attempts[-1]):
        return None
    seen = ", ".join(str(a.status) if a.status is not None else error_kind(a) or "no answer"
                     for a in attempts)
    last = attempts[-1]
    what = (f"{last.status} {(last.response_body or '')[:160]}".strip() if last.status is not None
            else (last.error or "no answer"))
    return (f"{last.method} {last.url} could not be read in {len(attempts)} tries ({seen}); the last: {what}")
