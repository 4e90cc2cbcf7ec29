"""What a client that records its attempts needs from a recorder, so the client layer can record into the
history layer above it without importing it (`ctk.history.recorder.History` is the real recorder)."""

from __future__ import annotations

import itertools
from typing import Any, Protocol


class Recorder(Protocol):
    """Receives every attempt of a logical operation: ``invoke`` before it is sent, ``record_exchange``
    with its answer (the exchange record of ``ctk.core.exchange``)."""

    def new_op_id(self) -> int: ...

    def invoke(self, process: Any, op: str, value: Any = None, key: str | None = None,
               op_id: int | None = None, attempt: int = 1) -> Any: ...

    def record_exchange(self, invocation: Any, exchange: Any) -> Any: ...


class Unrecorded:
    """A recorder that keeps nothing: operation ids only, for a client whose attempts nobody judges."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def new_op_id(self) -> int:
        return next(self._ids)

    def invoke(self, process: Any, op: str, value: Any = None, key: str | None = None,
               op_id: int | None = None, attempt: int = 1) -> None:
        return None

    def record_exchange(self, invocation: Any, exchange: Any) -> None:
        return None
