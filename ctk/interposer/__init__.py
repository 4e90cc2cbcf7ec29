"""Fault-injecting interposer: an asyncio TCP/HTTP proxy with Toxiproxy-style toxics.

    from ctk.interposer import Interposer, HttpMatch
    ip = Interposer(upstream=("127.0.0.1", 8181)); host, port = ip.start()
    ip.add_http_toxic("drop_response", match=HttpMatch(method="POST", path=r"/tables/"), times=1)
    ...; ip.stop()

`InterposerClient(api_url)` drives the control API of `ctk interposer` (or of a real Toxiproxy server).
`TemporaryPostgres` (ctk.interposer.postgres) starts a throwaway PostgreSQL cluster for tests.
"""

from ctk.interposer.client import InterposerClient, InterposerError
from ctk.interposer.http_toxics import HTTP_TOXICS, HttpMatch
from ctk.interposer.runtime import Interposer
from ctk.interposer.toxics import TCP_TOXICS, ToxicError

__all__ = [
    "HTTP_TOXICS",
    "TCP_TOXICS",
    "HttpMatch",
    "Interposer",
    "InterposerClient",
    "InterposerError",
    "ToxicError",
]
