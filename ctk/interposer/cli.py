"""`ctk interposer --listen 127.0.0.1:PORT --upstream HOST:PORT [--api 127.0.0.1:8474]`"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from ctk.interposer import loops
from ctk.interposer.api import ApiServer, Registry
from ctk.interposer.listener import Proxy, check_loopback, parse_hostport


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--listen", help="loopback HOST:PORT the proxy listens on (port 0: any free port)")
    parser.add_argument("--upstream", help="HOST:PORT of the server behind the proxy")
    parser.add_argument("--api", default="127.0.0.1:8474", help="loopback HOST:PORT of the Toxiproxy-compatible "
                        "control API (default 127.0.0.1:8474; 'none' to disable)")
    parser.add_argument("--name", default="ctk", help="name of the proxy in the control API (default ctk)")
    parser.add_argument("--protocol", choices=("auto", "tcp", "http"), default="auto",
                        help="auto (sniff HTTP/1.x per connection), tcp (never parse), http")
    parser.add_argument("--loop", choices=loops.CHOICES, default=None,
                        help="event loop: auto (uvloop when installed, unless CTK_INTERPOSER_LOOP=asyncio; the "
                        "default), asyncio, uvloop")


def run(args: argparse.Namespace) -> int:
    try:
        listen = parse_hostport(args.listen) if args.listen else None
        upstream = parse_hostport(args.upstream) if args.upstream else None
        api = None if str(args.api).lower() == "none" else parse_hostport(args.api)
        if listen is not None:
            check_loopback(listen[0])
        if api is not None:
            check_loopback(api[0])
    except ValueError as exc:
        print(f"ctk interposer: {exc}", file=sys.stderr)
        return 2
    if (listen is None) != (upstream is None):
        print("ctk interposer: --listen and --upstream go together", file=sys.stderr)
        return 2
    if listen is None and api is None:
        print("ctk interposer: nothing to do (no proxy and no API)", file=sys.stderr)
        return 2
    try:
        loop_name = loops.resolve(getattr(args, "loop", None))
    except (ValueError, ImportError) as exc:
        print(f"ctk interposer: {exc}", file=sys.stderr)
        return 2
    loop = loops.new_event_loop(loop_name)
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(_serve(args.name, listen, upstream, api, args.protocol, loop_name))
    except KeyboardInterrupt:
        return 0
    finally:
        try:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        finally:
            asyncio.set_event_loop(None)
            loop.close()


async def _serve(name, listen, upstream, api, protocol, loop_name: str = "asyncio") -> int:
    registry = Registry()
    server = None
    try:
        if listen is not None:
            proxy = Proxy(name, listen, upstream, protocol=protocol)
            await proxy.start()
            registry.proxies[name] = proxy
            print(f"interposer {name}: {proxy.listen[0]}:{proxy.listen[1]} -> {upstream[0]}:{upstream[1]} "
                  f"(event loop: {loop_name})", flush=True)
        if api is not None:
            server = ApiServer(registry, api)
            host, port = await server.start()
            print(f"control API: http://{host}:{port}", flush=True)
    except OSError as exc:
        print(f"ctk interposer: cannot listen: {exc}", file=sys.stderr)
        await registry.close()
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    await stop.wait()
    if server is not None:
        await server.stop()
    await registry.close()
    return 0
