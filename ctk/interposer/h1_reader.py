"""The coroutine path's driver of the sans-IO parser (h1.py): the same `Parser`, fed from an asyncio
StreamReader, with awaitable "next head" and "rest of this body" steps.

The fast path feeds the very same parser object from ``data_received``; a direction handed from one path to
the other keeps its parser (bytes read ahead included), so neither path translates the other's state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ctk.interposer import h1
from ctk.interposer.http_toxics import CHUNK, Head, HttpProtocolError

Sink = Callable[[bytes], Awaitable[None]]


class MessageReader:
    __slots__ = ("reader", "parser")

    def __init__(self, reader: asyncio.StreamReader, parser: h1.Parser):
        self.reader = reader
        self.parser = parser

    async def _more(self) -> bool:
        data = await self.reader.read(CHUNK)
        if not data:
            return False
        self.parser.add(data)
        return True

    async def head(self, method: Callable[[], str | None] | None = None) -> Head | None:
        """The next message head, or None when the peer closed cleanly before one. Blank lines before it are
        skipped. `method` (responses): the method of the request the next answer is for, asked when the head
        is parsed. HttpProtocolError when the bytes are not a usable head (``parser.head`` is then the head
        when only its framing was unusable)."""
        p = self.parser
        while True:
            if p.state.phase == h1.HOLD:
                p.release()  # the coroutine path reads on; a 101 hands the bytes read ahead to the tunnel
            kind = p.next(method() if method is not None else None)
            if kind == h1.EV_HEAD:
                return p.head
            if kind == h1.EV_SKIP or kind == h1.EV_END:
                continue
            if kind == h1.EV_ERROR:
                raise HttpProtocolError(p.error)
            if kind != h1.NEED_DATA:
                raise HttpProtocolError(f"{h1.EVENT_NAMES[kind]} where a message head was due")
            if not await self._more():
                cut = p.at_eof()
                if cut is not None:
                    raise HttpProtocolError(cut)
                return None

    async def body(self, sink: Sink) -> None:
        """Pass the rest of the current message (raw framing included) to `sink`, span by span as it arrives,
        up to its end; a body delimited by the close ends with the peer's close."""
        p = self.parser
        while True:
            kind = p.next()
            if kind == h1.EV_BODY:
                await sink(p.data[p.start:p.stop])
            elif kind == h1.EV_END:
                if p.stop > p.start:
                    await sink(p.data[p.start:p.stop])
                return
            elif kind == h1.EV_ERROR:
                raise HttpProtocolError(p.error)
            elif kind == h1.NEED_DATA:
                if p.state.phase not in h1.IN_BODY and p.state.phase != h1.CLOSE:
                    return
                if not await self._more():
                    if p.close_body_end():
                        return
                    raise HttpProtocolError(p.at_eof() or "connection closed in the middle of a body")
            else:
                raise HttpProtocolError(f"{h1.EVENT_NAMES[kind]} inside a body")

    async def whole_body(self) -> bytes:
        parts: list[bytes] = []

        async def keep(b: bytes) -> None:
            parts.append(b)

        await self.body(keep)
        return b"".join(parts)
