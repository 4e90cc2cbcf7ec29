"""`InterposerClient`: a client of the Toxiproxy HTTP API (ours, or a real Toxiproxy server's).

Against a real Toxiproxy only the standard toxic types exist, and the counter/event extensions raise
`InterposerError` (404).
"""

from __future__ import annotations

from typing import Any

import httpx


class InterposerError(RuntimeError):
    """An error answer: `status`, `message` (the server's "error" text, Toxiproxy's own wording) and `detail`
    (what our interposer adds, when it does)."""

    def __init__(self, status: int, message: str, detail: str | None = None):
        super().__init__(f"{status}: {message}" + (f" ({detail})" if detail else ""))
        self.status = status
        self.message = message
        self.detail = detail


class InterposerClient:
    def __init__(self, api_url: str = "http://127.0.0.1:8474", *, timeout: float = 10.0):
        self.api_url = api_url.rstrip("/")
        self._http = httpx.Client(base_url=self.api_url, timeout=timeout, headers={"User-Agent": "ctk-interposer"})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> InterposerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _req(self, method: str, path: str, body: Any = None) -> Any:
        r = self._http.request(method, path, json=body) if body is not None else self._http.request(method, path)
        if r.status_code >= 400:
            detail = None
            try:
                body = r.json()
                message = body.get("error") or r.text
                detail = body.get("detail")
            except (ValueError, AttributeError):
                message = r.text.strip() or r.reason_phrase
            raise InterposerError(r.status_code, str(message), detail)
        if r.status_code == 204 or not r.content:
            return None
        try:
            return r.json()
        except ValueError:
            return r.text

    # --------------------------------------------------------------- server
    def version(self) -> str:
        v = self._req("GET", "/version")
        if isinstance(v, dict):
            return str(v.get("version", ""))
        return str(v).strip()

    def reset(self) -> None:
        self._req("POST", "/reset")

    # --------------------------------------------------------------- proxies
    def proxies(self) -> dict[str, dict[str, Any]]:
        return self._req("GET", "/proxies")

    def create_proxy(self, name: str, upstream: str, listen: str = "127.0.0.1:0", enabled: bool = True) -> dict:
        return self._req("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": enabled})

    def populate(self, proxies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = self._req("POST", "/populate", proxies)
        return out.get("proxies", out) if isinstance(out, dict) else out

    def get_proxy(self, name: str) -> dict[str, Any]:
        return self._req("GET", f"/proxies/{name}")

    def update_proxy(self, name: str, **fields: Any) -> dict[str, Any]:
        return self._req("POST", f"/proxies/{name}", fields)

    def set_enabled(self, name: str, enabled: bool) -> dict[str, Any]:
        return self.update_proxy(name, enabled=enabled)

    def delete_proxy(self, name: str) -> None:
        self._req("DELETE", f"/proxies/{name}")

    # --------------------------------------------------------------- toxics
    def toxics(self, proxy: str) -> list[dict[str, Any]]:
        return self._req("GET", f"/proxies/{proxy}/toxics")

    def add_toxic(
        self,
        proxy: str,
        type: str,
        stream: str = "downstream",
        attributes: dict[str, Any] | None = None,
        toxicity: float = 1.0,
        name: str | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"type": type, "stream": stream, "toxicity": toxicity, "attributes": attributes or {}}
        if name:
            body["name"] = name
        return self._req("POST", f"/proxies/{proxy}/toxics", body)

    def add_http_toxic(self, proxy: str, type: str, match: Any = None, *, times: int = 1, toxicity: float = 1.0,
                       name: str | None = None, **attrs: Any) -> dict[str, Any]:
        """Extension types (drop_response, replace_status, ...): only our interposer knows them."""
        attributes = dict(match.to_attributes()) if match is not None else {}
        attributes.update(attrs)
        attributes["times"] = times
        return self.add_toxic(proxy, type, "downstream", attributes, toxicity, name)

    def get_toxic(self, proxy: str, name: str) -> dict[str, Any]:
        return self._req("GET", f"/proxies/{proxy}/toxics/{name}")

    def update_toxic(self, proxy: str, name: str, attributes: dict[str, Any] | None = None,
                     toxicity: float | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"attributes": attributes or {}}
        if toxicity is not None:
            body["toxicity"] = toxicity
        return self._req("POST", f"/proxies/{proxy}/toxics/{name}", body)

    def remove_toxic(self, proxy: str, name: str) -> None:
        self._req("DELETE", f"/proxies/{proxy}/toxics/{name}")

    # --------------------------------------------------------------- extensions
    def counters(self, proxy: str) -> dict[str, Any]:
        return self._req("GET", f"/proxies/{proxy}/counters")

    def reset_counters(self, proxy: str) -> None:
        self._req("DELETE", f"/proxies/{proxy}/counters")

    def events(self, proxy: str) -> list[dict[str, Any]]:
        return self._req("GET", f"/proxies/{proxy}/events")


class ProxyLink:
    """One proxy of a running ``ctk interposer`` (or Toxiproxy), named by its control-API URL
    ``http://HOST:PORT/proxies/NAME``, with the toxic methods of the in-process `Interposer` (``add_toxic``,
    ``remove_toxic``, ``enable``, ``disable``, ``counters``, ``events_of``), so that checks written against one
    work against the other. Used for the link between a catalog and its database (``--ctk-db-link``)."""

    def __init__(self, url: str, *, timeout: float = 10.0):
        from urllib.parse import unquote, urlsplit

        parts = urlsplit(url.strip())
        segments = [s for s in parts.path.split("/") if s]
        if parts.scheme != "http" or not parts.hostname or len(segments) != 2 or segments[0] != "proxies":
            raise ValueError(f"not a proxy of an interposer's control API: {url!r} (expected "
                             "http://HOST:PORT/proxies/NAME, e.g. http://127.0.0.1:8474/proxies/catalog-db)")
        if not _loopback(parts.hostname):
            raise ValueError(f"the interposer's control API must be on loopback (127.0.0.0/8, ::1 or localhost), "
                             f"not {parts.hostname!r}")
        self.url = url.strip().rstrip("/")
        self.name = unquote(segments[1])
        self.client = InterposerClient(f"http://{parts.netloc}", timeout=timeout)
        self._seq = 0

    def describe(self) -> str:
        return self.url

    def check(self) -> dict[str, Any]:
        """The proxy's description (listen, upstream, enabled); InterposerError when it does not exist."""
        return self.client.get_proxy(self.name)

    def add_toxic(self, name: str | None = None, type: str = "latency", stream: str = "downstream",
                  attributes: dict[str, Any] | None = None, toxicity: float = 1.0) -> str:
        if name is None:
            self._seq += 1
            name = f"ctk_{type}_{self._seq}"
        self.client.add_toxic(self.name, type, stream, attributes, toxicity, name)
        return name

    def remove_toxic(self, name: str) -> None:
        self.client.remove_toxic(self.name, name)

    def toxics(self) -> list[dict[str, Any]]:
        return self.client.toxics(self.name)

    def enable(self) -> None:
        self.client.set_enabled(self.name, True)

    def disable(self) -> None:
        self.client.set_enabled(self.name, False)

    @property
    def counters(self) -> dict[str, Any]:
        return self.client.counters(self.name)

    def events(self) -> list[dict[str, Any]]:
        return self.client.events(self.name)

    def events_of(self, toxic: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.events() if e.get("toxic") == toxic and (kind is None or e.get("kind") == kind)]

    def close(self) -> None:
        self.client.close()


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
