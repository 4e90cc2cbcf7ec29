"""The sans-IO HTTP/1.1 parser (ctk/interposer/h1.py): events for every framing, and the same events (bytes
joined per kind) however the input is split."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctk.interposer import h1


def kinds(events):
    return [e.name for e in events]


def joined(events):
    """Per message: head bytes, body bytes (raw framing), and whether it ended; tunnel bytes apart."""
    out, cur, tunnel = [], None, b""
    for e in events:
        if e.kind == h1.EV_HEAD:
            cur = [e.raw, b"", False]
            out.append(cur)
        elif e.kind in (h1.EV_BODY, h1.EV_END):
            cur[1] += e.raw
            if e.kind == h1.EV_END:
                cur[2] = True
        elif e.kind == h1.EV_TUNNEL:
            tunnel += e.raw
        elif e.kind == h1.EV_ERROR:
            out.append(("error", e.error))
    return out, tunnel


def test_content_length_request():
    p = h1.Parser(h1.REQUEST)
    ev = p.feed(b"POST /v1/x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
    assert kinds(ev) == ["head", "end"]
    assert ev[0].head.method == "POST" and ev[0].head.target == "/v1/x"
    assert ev[1].raw == b"hello"
    assert p.state == h1.State(h1.HEAD, 0, False)


def test_body_split_reports_bytes_left_in_the_state():
    p = h1.Parser(h1.REQUEST)
    ev = p.feed(b"PUT / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc")
    assert kinds(ev) == ["head", "body"] and ev[1].raw == b"abc"
    assert p.state == h1.State(h1.LEN, 7, False)
    # the state is a value: a new parser resumes from it
    q = h1.Parser(h1.REQUEST, h1.State(p.state.phase, p.state.left))
    ev = q.feed(b"defghijGET / HTTP/1.1\r\n\r\n")
    assert kinds(ev) == ["end", "head", "end"] and ev[0].raw == b"defghij"


def test_chunked_with_trailers():
    body = b"5;ext=1\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n"
    ev = h1.Parser(h1.REQUEST).feed(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
    msgs, _ = joined(ev)
    assert msgs[0][1] == body and msgs[0][2]
    assert kinds(ev)[-1] == "end"


def test_blank_lines_between_requests_are_skipped():
    ev = h1.Parser(h1.REQUEST).feed(b"\r\n\r\nGET / HTTP/1.1\r\n\r\n")
    assert kinds(ev) == ["skip", "head", "end"]


@pytest.mark.parametrize("method,status,line", [
    ("HEAD", 200, b"Content-Length: 10\r\n"),
    ("GET", 204, b""),
    ("GET", 304, b"Content-Length: 10\r\n"),
    ("GET", 100, b""),
])
def test_answers_without_body(method, status, line):
    p = h1.Parser(h1.RESPONSE)
    p.add(b"HTTP/1.1 %d X\r\n%s\r\n" % (status, line))
    assert p.next(method) == h1.EV_HEAD and p.kind == "none"
    assert p.next() == h1.EV_END
    assert p.state.phase == h1.HEAD


def test_answer_without_framing_is_read_until_close():
    p = h1.Parser(h1.RESPONSE)
    ev = p.feed(b"HTTP/1.0 200 OK\r\n\r\nsome")
    assert kinds(ev) == ["head", "body"] and p.state.phase == h1.CLOSE
    assert kinds(p.feed(b" more")) == ["body"]
    assert p.at_eof() is None and p.close_body_end() and p.state.phase == h1.DONE


def test_upgrade_request_holds_until_the_answer_decides():
    p = h1.Parser(h1.REQUEST)
    ev = p.feed(b"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\nraw bytes")
    assert kinds(ev) == ["head", "end"] and p.state.phase == h1.HOLD
    assert p.pending() == b"raw bytes"
    p.tunnel()
    assert [(e.name, e.raw) for e in p.events()] == [("tunnel", b"raw bytes")]
    q = h1.Parser(h1.REQUEST)
    q.feed(b"GET / HTTP/1.1\r\nConnection: upgrade\r\n\r\nGET /b HTTP/1.1\r\n\r\n")
    q.release()
    ev = q.events()
    assert kinds(ev) == ["head", "end"] and ev[0].head.target == "/b"


@pytest.mark.parametrize("raw,error,in_body,head", [
    (b"GARBAGE\r\n\r\n", "bad start line", False, False),
    (b"GET / HTTP/1.1\r\nno colon\r\n\r\n", "bad header line", False, False),
    (b"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", "bad Content-Length", False, True),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", "request without usable framing", False, True),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size", True, False),
])
def test_errors(raw, error, in_body, head):
    p = h1.Parser(h1.REQUEST)
    ev = p.feed(raw)
    assert ev[-1].kind == h1.EV_ERROR and error in ev[-1].error
    assert p.in_body is in_body and (p.head is not None) is head
    assert p.state.phase == h1.DONE
    assert kinds(p.feed(b"more")) == ["skip"]


def test_head_too_large_and_cut_short():
    p = h1.Parser(h1.REQUEST)
    ev = p.feed(b"GET / HTTP/1.1\r\nX: " + b"a" * (h1.MAX_LINE + 1))
    assert ev[-1].error == "message head too large"
    q = h1.Parser(h1.REQUEST)
    assert q.feed(b"GET / HT") == [] and q.at_eof() == "connection closed in the middle of a message head"
    r = h1.Parser(h1.REQUEST)
    r.feed(b"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\na")
    assert r.at_eof() == "connection closed in the middle of a body"


def test_bad_role():
    with pytest.raises(ValueError, match="role"):
        h1.Parser("sideways")


STREAM = (
    b"POST /a HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world"
    b"\r\n"
    b"PUT /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\n"
    b"GET /c HTTP/1.1\r\nHost: x\r\n\r\n"
    b"GET /u HTTP/1.1\r\nConnection: Upgrade\r\n\r\n"
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_gives_the_same_messages(cuts):
    whole = joined(h1.Parser(h1.REQUEST).feed(STREAM))
    p = h1.Parser(h1.REQUEST)
    events = []
    bounds = [0, *sorted(cuts), len(STREAM)]
    for a, b in zip(bounds, bounds[1:]):
        events += p.feed(STREAM[a:b])
    assert joined(events) == whole
    assert [m[0].split(b" ")[1] for m in whole[0]] == [b"/a", b"/b", b"/c", b"/u"]
    assert p.state.phase == h1.HOLD


# ---------------------------------------------------------------- the coroutine path's driver (h1_reader)

def _run_reader(data: bytes, role: str, steps):
    import asyncio

    from ctk.interposer.h1_reader import MessageReader

    async def go():
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        msgs = MessageReader(reader, h1.Parser(role))
        return await steps(msgs)

    return asyncio.run(go())


def test_reader_heads_and_bodies_then_a_clean_end():
    async def steps(msgs):
        out = []
        while (head := await msgs.head(lambda: "GET")) is not None:
            out.append((head.status, msgs.parser.kind, await msgs.whole_body()))
        return out

    data = (b"HTTP/1.1 100 Continue\r\n\r\n"
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"
            b"HTTP/1.0 200 OK\r\n\r\nuntil the close")
    assert _run_reader(data, h1.RESPONSE, steps) == [
        (100, "none", b""), (200, "length", b"ok"), (200, "chunked", b"2\r\nab\r\n0\r\n\r\n"),
        (200, "close", b"until the close")]


def test_reader_errors_name_what_was_cut():
    from ctk.interposer.http_toxics import HttpProtocolError

    async def body_cut(msgs):
        await msgs.head()
        await msgs.whole_body()

    with pytest.raises(HttpProtocolError, match="middle of a body"):
        _run_reader(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nabc", h1.REQUEST, body_cut)

    async def head_cut(msgs):
        await msgs.head()

    with pytest.raises(HttpProtocolError, match="middle of a message head"):
        _run_reader(b"POST / HTTP/1.1\r\nHost", h1.REQUEST, head_cut)
    with pytest.raises(HttpProtocolError, match="bad start line"):
        _run_reader(b"NONSENSE\r\n\r\n", h1.REQUEST, head_cut)
