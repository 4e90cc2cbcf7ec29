"""The generated checks' hang backstop (--ctk-gen-budget): a clock of answers, not of the run.

Both generated checks (GEN-01's cases, GEN-02's model run) are bounded by counts (examples, steps, shrinks); the
backstop only stops one whose catalog stopped answering, so that the same run gives the same verdicts on a busy
runner as on a quiet one."""

from __future__ import annotations

import time
from typing import Any


class Progress:
    """The hang backstop's clock: when the catalog last answered one of the run's requests (any status; a
    transport error or timeout is no answer). `stalled()` once no request was answered for `limit_s` seconds: a
    slow catalog that keeps answering - a busy runner - never reaches it, however long the run takes."""

    def __init__(self, client: Any, limit_s: float, clock: Any = time.monotonic):
        self.client = client
        self.limit_s = limit_s
        self.clock = clock
        self.seen = len(client.exchanges)
        self.last = clock()

    def stalled(self) -> bool:
        new = self.client.exchanges_since(self.seen)
        self.seen += len(new)
        if any(ex.status is not None for ex in new):
            self.last = self.clock()
        return self.clock() - self.last > self.limit_s
