"""Settings of the embedded reference catalog (options of `ctk serve`, or CTK_REF_* environment)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, fields
from datetime import timedelta

import isodate


@functools.lru_cache(maxsize=64)
def parse_duration(text: str) -> timedelta:
    """An ISO-8601 duration such as PT30M, through isodate; raises ValueError with the text. Kept per text (a
    keyed commit asks for its key's expiry: parsing the lifetime and the grace each time was 1.5 % of it)."""
    try:
        value = isodate.parse_duration(text)
    except (isodate.ISO8601Error, ValueError, TypeError) as exc:
        raise ValueError(f"not an ISO-8601 duration: {text!r} ({exc})") from None
    if not isinstance(value, timedelta):  # years/months give isodate.Duration
        value = value.totimedelta(start=__import__("datetime").datetime(2000, 1, 1))
    return value


@dataclass
class ReferenceSettings:
    host: str = "127.0.0.1"
    port: int = 0                               # 0: pick a free port
    warehouse: str | None = None                # directory for metadata files; None: a temporary one
    database_url: str | None = None             # SQLAlchemy URL; None: SQLite in the warehouse
    prefix: str = ""                            # advertised in /v1/config overrides when set
    idempotency_lifetime: str | None = "PT30M"  # None: do not advertise (keys then ignored)
    idempotency_grace: str = "PT5M"
    in_flight: str = "reject"                   # "reject" (409 request_in_progress) or "wait" (wait-and-replay)
    in_flight_wait_timeout: float = 30.0        # seconds a waiting duplicate waits before 409
    sweep_interval: float = 60.0                # seconds between sweeps of expired records
    max_body_bytes: int = 8 * 1024 * 1024
    control_api: bool = False                   # enable /_ctk/... test hooks (never on by default)
    deviation: str | None = None                # name of a deviation profile (ctk.reference.deviations)
    variant: str | None = None                  # name of an allowed-variant profile (ctk.reference.variants)
    token: str | None = None                    # when set, requests must carry "Authorization: Bearer <token>"
    planning_mode: str = "sync"                 # planTableScan: "sync" (answer completed) or "async" (answer
                                                # submitted; the plan completes on fetchPlanningResult)
    plan_task_size: int = 1                     # file scan tasks per plan task (handed out by fetchScanTasks);
                                                # 0: every file scan task inline in the planning result
    plan_ttl: float = 86400.0                   # seconds a plan is kept (dropped by the next planTableScan after)
    db_statement_retries: int = 0               # a statement that failed on a lost database connection is run
                                                # again on a fresh one (the open transaction replayed first), up
                                                # to this many times, silently (ctk.reference.retrying_pool);
                                                # a server database (database_url) only
    request_spec: str | None = None             # an OpenAPI document whose request schemas a body must match too
                                                # (e.g. the merged upstream one); the kit's own always applies:
                                                # a body either forbids is answered 400 BadRequestException
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.idempotency_lifetime is not None:
            parse_duration(self.idempotency_lifetime)
        parse_duration(self.idempotency_grace)
        if self.in_flight not in ("reject", "wait"):
            raise ValueError(f"in_flight must be 'reject' or 'wait', not {self.in_flight!r}")
        if self.planning_mode not in ("sync", "async"):
            raise ValueError(f"planning_mode must be 'sync' or 'async', not {self.planning_mode!r}")
        if self.db_statement_retries < 0:
            raise ValueError(f"db_statement_retries (ctk serve --db-statement-retries) must be >= 0, not "
                             f"{self.db_statement_retries}")
        if self.plan_task_size < 0:
            raise ValueError(f"plan_task_size must be >= 0, not {self.plan_task_size}")
        if self.deviation is not None:
            from ctk.reference.deviations import get_profile

            get_profile(self.deviation)  # raises with the list of known profiles
        if self.variant is not None:
            from ctk.reference.variants import get_variant

            get_variant(self.variant)    # raises with the list of known variants
            if self.deviation is not None:
                raise ValueError(f"give a deviation profile or a variant profile, not both "
                                 f"({self.deviation!r} and {self.variant!r})")

    @property
    def lifetime(self) -> timedelta | None:
        return None if self.idempotency_lifetime is None else parse_duration(self.idempotency_lifetime)

    @property
    def grace(self) -> timedelta:
        return parse_duration(self.idempotency_grace)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides) -> "ReferenceSettings":
        """CTK_REF_<FIELD> variables (e.g. CTK_REF_PORT, CTK_REF_DATABASE_URL), then explicit overrides."""
        env = os.environ if environ is None else environ
        values: dict = {}
        for f in fields(cls):
            raw = env.get(f"CTK_REF_{f.name.upper()}")
            if raw is None or f.name == "extra":
                continue
            if f.type in ("int",):
                values[f.name] = int(raw)
            elif f.type in ("float",):
                values[f.name] = float(raw)
            elif f.type in ("bool",):
                values[f.name] = raw.lower() in ("1", "true", "yes", "on")
            else:
                values[f.name] = None if raw == "" else raw
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
