"""The copies of ``duplicate_request``: what the network sends twice. After the original (its answer first
unless ``parallel``; held until the toxic is removed with ``hold_copy``) one copy after another on connections
of their own (`send_copies`), or, ``parallel``, the original and every copy released upstream together
(`burst_out`); each copy's answer is read and counted, and one ``duplicate_burst`` event tells when each request
was forwarded and answered (the overlap the in-flight checks need)."""

from __future__ import annotations

import asyncio
from typing import Any

from ctk.interposer import h1
from ctk.interposer import http_toxics as ht
from ctk.interposer.h1_reader import MessageReader
from ctk.interposer.link import Link
from ctk.interposer.parts import ProxyView, ReqMeta
from ctk.interposer.toxics import Toxic

CONNECT_TIMEOUT = 10.0
DUPLICATE_TIMEOUT = 30.0
LAST_BYTE_WAIT = 0.01  # a parallel burst: seconds between all-but-the-last bytes and the last bytes


async def send_copies(proxy: ProxyView, t: Toxic, meta: ReqMeta, raw: bytes) -> None:
    """``duplicate_request``: copies sent after the original went out (after its answer unless ``parallel``), one
    after another."""
    if not t.attributes.get("parallel") and meta.primary_done is not None:
        try:
            await asyncio.wait_for(meta.primary_done.wait(), DUPLICATE_TIMEOUT)
        except asyncio.TimeoutError:
            pass
    if t.attributes.get("hold_copy") and not t.attributes.get("parallel") and any(x is t for x in proxy.toxics):
        released = proxy.released.setdefault(id(t), asyncio.Event())
        try:
            await asyncio.wait_for(released.wait(), DUPLICATE_TIMEOUT)
        except asyncio.TimeoutError:
            pass
    copies = []
    for _ in range(int(t.attributes.get("copies") or 1)):
        proxy.counters.injected["duplicate_request"] += 1
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter, float] | BaseException
        try:
            opened = await asyncio.wait_for(_open_copy(proxy), CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as exc:
            conn = exc
        else:
            opened[1].write(raw)
            conn = (*opened, asyncio.get_running_loop().time())
        copies.append(await _copy_answer(proxy, t, meta, conn))
    await _burst_event(proxy, t, meta, copies)


async def _open_copy(proxy: ProxyView) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = proxy.upstream
    return await asyncio.open_connection(host, port, limit=ht.MAX_HEAD)


async def burst_out(proxy: ProxyView, up: Link, t: Toxic, meta: ReqMeta, head: ht.Head, msgs: MessageReader) -> None:
    """``duplicate_request`` with ``parallel``: read the whole request, open the copies' connections, then
    write the original and every copy upstream in one turn of the loop; a side task reads the answers."""
    loop = asyncio.get_running_loop()
    raw = head.raw + await msgs.whole_body()
    n = int(t.attributes.get("copies") or 1)
    opened: list[tuple[asyncio.StreamReader, asyncio.StreamWriter] | BaseException] = await asyncio.gather(*(asyncio.wait_for(_open_copy(proxy), CONNECT_TIMEOUT) for _ in range(n)),
                                  return_exceptions=True)
    proxy.counters.injected["duplicate_request"] += n
    # all but the last byte first: the server reads the requests but can start none of them; then every
    # last byte in one turn of the loop, so that the requests become complete at the server together
    live = [c for c in opened if not isinstance(c, BaseException)]
    if live and len(raw) > 1:
        await up.send(raw[:-1])
        for c in live:
            c[1].write(raw[:-1])
        await asyncio.sleep(LAST_BYTE_WAIT)
        rest = raw[-1:]
    else:
        rest = raw
    await up.send(rest)
    meta.sent_at = loop.time()
    conns: list[Any] = []
    for got in opened:
        if isinstance(got, BaseException):
            conns.append(got)
            continue
        got[1].write(rest)
        conns.append((*got, loop.time()))
    task = asyncio.ensure_future(_burst_answers(proxy, t, meta, conns))
    proxy.side_tasks.add(task)
    task.add_done_callback(proxy.side_tasks.discard)


async def _burst_answers(proxy: ProxyView, t: Toxic, meta: ReqMeta, conns: list[Any]) -> None:
    copies = await asyncio.gather(*(_copy_answer(proxy, t, meta, c) for c in conns))
    await _burst_event(proxy, t, meta, list(copies))


async def _copy_answer(proxy: ProxyView, t: Toxic, meta: ReqMeta, conn: Any) -> dict[str, Any]:
    """Read one copy's answer (its connection from `_open_copy` with the time it was written, or the error
    that kept it from being opened); counts its status and returns what the burst event says of it."""
    if isinstance(conn, BaseException):
        proxy.counters.duplicate_statuses["error"] += 1
        proxy.event("duplicate_request", toxic=t.name, method=meta.method, target=meta.target, error=repr(conn))
        return {"role": "copy", "sent": None, "answered": None, "status": None, "error": repr(conn)}
    reader, writer, sent = conn
    try:
        status, answered, body = await asyncio.wait_for(_read_answer(reader, meta.method), DUPLICATE_TIMEOUT)
    except (OSError, asyncio.TimeoutError, ht.HttpProtocolError, asyncio.IncompleteReadError) as exc:
        proxy.counters.duplicate_statuses["error"] += 1
        proxy.event("duplicate_request", toxic=t.name, method=meta.method, target=meta.target, error=repr(exc))
        return {"role": "copy", "sent": sent, "answered": None, "status": None, "error": repr(exc)}
    finally:
        writer.close()
    proxy.counters.duplicate_statuses[str(status)] += 1
    proxy.event("duplicate_request", toxic=t.name, method=meta.method, target=meta.target, status=status)
    return {"role": "copy", "sent": sent, "answered": answered, "status": status, "body": body}


async def _read_answer(reader: asyncio.StreamReader, method: str) -> tuple[int, float, str]:
    """(status, when its head arrived, body text) of the final answer on a copy's connection."""
    msgs = MessageReader(reader, h1.Parser(h1.RESPONSE))
    while True:
        head = await msgs.head(lambda: method)
        if head is None:
            raise ht.HttpProtocolError("upstream closed without answering the duplicate")
        answered = asyncio.get_running_loop().time()
        chunked = msgs.parser.kind == "chunked"
        parts: list[bytes] = []
        kept = [0]

        async def sink(b: bytes) -> None:
            if kept[0] < ht.BODY_KEEP * 2:
                parts.append(b)
                kept[0] += len(b)

        await msgs.body(sink)
        if 100 <= head.status < 200 and head.status != 101:
            continue
        return head.status, answered, ht.body_text(b"".join(parts), chunked)


async def _burst_event(proxy: ProxyView, t: Toxic, meta: ReqMeta, copies: list[dict[str, Any]]) -> None:
    """One ``duplicate_burst`` event: the original and its copies, when each was forwarded and answered."""
    if meta.answer_at is None and meta.primary_done is not None:
        try:
            await asyncio.wait_for(meta.primary_done.wait(), DUPLICATE_TIMEOUT)
        except asyncio.TimeoutError:
            pass
    reqs = [{"role": "original", "sent": meta.sent_at or None, "answered": meta.answer_at,
             "status": meta.answer_status}] + copies
    found = ht.overlap(reqs)
    starts = [r["sent"] for r in reqs if r.get("sent") is not None]
    t0 = min(starts) if starts else 0.0

    def ms(v: float | None) -> float | None:
        return None if v is None else round((v - t0) * 1000, 3)

    shown = [{**{k: v for k, v in r.items() if k not in ("sent", "answered")}, "sent_ms": ms(r.get("sent")),
              "answer_ms": ms(r.get("answered"))} for r in reqs]
    proxy.event("duplicate_burst", toxic=t.name, method=meta.method, target=meta.target,
                     parallel=bool(t.attributes.get("parallel")), requests=shown, **found)
