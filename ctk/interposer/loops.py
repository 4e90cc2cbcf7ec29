"""Which event loop the interposer runs on: asyncio's own, or uvloop when it is installed (an optional
speed-up: `pip install uvloop`, or the `fast` extra). The proxy's CPU cost per request is mostly the event loop
and the socket calls; uvloop roughly halves the loop's part.

`loop="auto"` (the default) takes uvloop when importable unless CTK_INTERPOSER_LOOP=asyncio; "asyncio" and
"uvloop" force one (the latter fails when uvloop is missing).
"""

from __future__ import annotations

import asyncio
import os

CHOICES = ("auto", "asyncio", "uvloop")


def resolve(loop: str | None = None) -> str:
    """The loop that `loop` ("auto", "asyncio", "uvloop", None = environment or auto) means here."""
    choice = (loop or os.environ.get("CTK_INTERPOSER_LOOP") or "auto").lower()
    if choice not in CHOICES:
        raise ValueError(f"event loop must be one of {', '.join(CHOICES)}, got {choice!r}")
    if choice == "auto":
        if os.environ.get("CTK_INTERPOSER_LOOP", "").lower() == "asyncio":
            return "asyncio"
        try:
            import uvloop  # noqa: F401
        except ImportError:
            return "asyncio"
        return "uvloop"
    if choice == "uvloop":
        import uvloop  # noqa: F401  (ImportError: asked for, not installed)
    return choice


def new_event_loop(loop: str | None = None) -> asyncio.AbstractEventLoop:
    if resolve(loop) == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()
