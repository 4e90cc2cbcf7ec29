"""What a PostgreSQL client asks its server to run, read from the client's bytes (protocol 3, frontend side).

The ``cut_after`` toxic (toxics.py) acts on the statement a chunk makes the database run. A regular expression
over the raw bytes sees that statement only while its SQL text travels with it: a simple Query ('Q'), or an
unnamed Parse sent together with its Bind/Execute. Drivers stop sending the text once they keep a statement
prepared on the server: the PostgreSQL JDBC driver after ``prepareThreshold`` (5) executions, psycopg after
``prepare_threshold`` (5); from then on an execution is Bind (portal <- statement name) and Execute (portal),
and only the name is on the wire. `FrontendReader` follows the extended-query protocol per connection - the
name -> SQL map of Parse / Close, the portal -> statement map of Bind - so that it can say, for each chunk,
which SQL texts the chunk's complete Query and Execute messages run.

    reader = FrontendReader()
    texts = reader.feed(chunk)     # SQL run by the messages this chunk completes (oldest first), or None:
                                   # not (or no longer) a readable PostgreSQL stream (TLS, another protocol)

Only what naming a statement needs is kept: message bodies other than Parse, Query, Bind, Execute and Close
are skipped by their length, Parse/Query texts are kept up to `TEXT_LIMIT` bytes and Bind up to `NAME_LIMIT`
(its parameter values - a table's metadata - are skipped), so memory per connection is bounded.
"""

from __future__ import annotations

import struct

PROTOCOL_3 = 3                     # major version of the startup message (3.0, 3.2)
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102
STARTUP_LIMIT = 10_000             # a startup packet longer than this is not PostgreSQL's (TLS, another protocol)
TEXT_LIMIT = 64 << 10              # bytes of SQL text kept per Parse / Query
NAME_LIMIT = 256                   # bytes kept of a Bind (portal and statement names: NAMEDATALEN is 64)
MAP_LIMIT = 4096                   # named statements kept per connection (a driver's cache is smaller)

_KEEP = {b"P": TEXT_LIMIT + NAME_LIMIT, b"Q": TEXT_LIMIT, b"B": NAME_LIMIT, b"E": NAME_LIMIT, b"C": NAME_LIMIT}


def _cstrings(body: bytes, n: int) -> list[str]:
    """The first `n` NUL-terminated strings of `body` (a string cut by a limit ends where the body does)."""
    out: list[str] = []
    at = 0
    for _ in range(n):
        end = body.find(b"\0", at)
        if end < 0:
            out.append(body[at:].decode("utf-8", "replace"))
            at = len(body)
        else:
            out.append(body[at:end].decode("utf-8", "replace"))
            at = end + 1
    return out


class FrontendReader:
    """The frontend (client -> server) half of one PostgreSQL connection; see the module docstring."""

    def __init__(self) -> None:
        self.readable = True
        self.startup = True            # the next message has no type byte (startup, SSL/GSS request)
        self.statements: dict[str, str] = {}   # statement name ("" = unnamed) -> SQL
        self.portals: dict[str, str] = {}      # portal name ("" = unnamed) -> SQL
        self._head = b""               # bytes of a message header not complete yet
        self._type = b""               # type of the message being read
        self._left = 0                 # bytes of its body still to come
        self._keep = 0                 # how many more of them to keep
        self._body: list[bytes] = []

    def feed(self, data: bytes) -> list[str] | None:
        """The SQL texts the messages completed by `data` run (Query, Execute), or None when the stream is not a
        readable PostgreSQL protocol 3 stream (from then on, always None)."""
        if not self.readable:
            return None
        run: list[str] = []
        at, n = 0, len(data)
        while at < n:
            if self._left:                       # inside a body
                take = min(self._left, n - at)
                if self._keep:
                    kept = data[at:at + min(take, self._keep)]
                    self._body.append(kept)
                    self._keep -= len(kept)
                self._left -= take
                at += take
                if not self._left:
                    self._message(b"".join(self._body), run)
                continue
            need = (8 if self.startup else 5) - len(self._head)
            self._head += data[at:at + need]
            at += min(need, n - at)
            if len(self._head) < (8 if self.startup else 5):
                break
            if not self._begin():
                self.readable = False
                return None
            if not self._left:                   # an empty body
                self._message(b"", run)
        return run

    def _begin(self) -> bool:
        """A header is complete: start its body; False when it cannot be PostgreSQL's."""
        head, self._head = self._head, b""
        self._body = []
        if self.startup:
            length, code = struct.unpack("!ii", head)
            if not 8 <= length <= STARTUP_LIMIT:
                return False
            if code in (SSL_REQUEST, GSSENC_REQUEST):
                if length != 8:
                    return False
                self._type = b"?"          # the server answers one byte; the next message is a startup again
            elif code == CANCEL_REQUEST or (code >> 16) == PROTOCOL_3:
                self._type = b"0"
            else:
                return False
            self._left = length - 8
            self._keep = 0
            return True
        self._type = head[:1]
        (length,) = struct.unpack("!i", head[1:5])
        if length < 4 or not (head[:1].isalpha()):
            return False
        self._left = length - 4
        self._keep = _KEEP.get(self._type, 0)
        return True

    def _message(self, body: bytes, run: list[str]) -> None:
        kind = self._type
        self._body = []
        if kind == b"?":
            return                              # SSL / GSS request: a startup message follows (unless TLS: unreadable)
        if kind == b"0":
            self.startup = False
            return
        if kind == b"Q":
            run.append(_cstrings(body, 1)[0])
        elif kind == b"P":
            name, sql = _cstrings(body, 2)
            if name not in self.statements and len(self.statements) >= MAP_LIMIT:
                self.statements.pop(next(iter(self.statements)))
            self.statements[name] = sql
        elif kind == b"B":
            portal, name = _cstrings(body, 2)
            self.portals[portal] = self.statements.get(name, "")
            if len(self.portals) > MAP_LIMIT:
                self.portals.pop(next(iter(self.portals)))
        elif kind == b"E":
            ran = self.portals.get(_cstrings(body, 1)[0])
            if ran:
                run.append(ran)
        elif kind == b"C" and body:
            what, name = body[:1], _cstrings(body[1:], 1)[0]
            (self.statements if what == b"S" else self.portals).pop(name, None)
