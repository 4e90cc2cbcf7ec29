"""A database connection that retries a failed statement once on a fresh connection (`ReferenceSettings.
db_statement_retries`), as some JDBC pools and drivers do silently (transaction replay): when a statement fails
because the connection was lost, a new connection is opened, the statements the open transaction had run are
run again on it, then the failed one. A COMMIT or ROLLBACK that fails is never retried (its outcome is
unknown). A catalog built like this hides a database write that failed once: the kit's ``fail_write`` fault on
the database link is absorbed, and only a link that stays down until the catalog answered (``fail_write_hold``)
makes it answer the 5xx (REPLAY-03 through ``--ctk-db-link``).

`install(engine, retries)` makes every new DBAPI connection of a SQLAlchemy engine such a connection (through
the engine's ``do_connect`` event); the connections forward everything else to the driver's connection.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from sqlalchemy import event
from sqlalchemy.engine import Engine

log = logging.getLogger("ctk.reference.pool")


class RetryingConnection:
    """A DBAPI connection that replays its open transaction on a fresh connection when a statement fails on a
    lost connection (at most `retries` times per statement)."""

    _own = ("_connect", "_inner", "_retries", "_log", "retried")

    def __init__(self, connect: Callable[[], Any], retries: int):
        object.__setattr__(self, "_connect", connect)
        object.__setattr__(self, "_inner", connect())
        object.__setattr__(self, "_retries", retries)
        object.__setattr__(self, "_log", [])      # (method, args, kwargs) run in the open transaction
        object.__setattr__(self, "retried", 0)    # statements that were retried on a fresh connection

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._own:
            object.__setattr__(self, name, value)
        else:
            setattr(self._inner, name, value)

    def cursor(self, *args: Any, **kwargs: Any) -> "RetryingCursor":
        return RetryingCursor(self, args, kwargs)

    def commit(self) -> None:
        self._log.clear()
        self._inner.commit()

    def rollback(self) -> None:
        self._log.clear()
        self._inner.rollback()

    def close(self) -> None:
        self._log.clear()
        self._inner.close()

    def lost(self) -> bool:
        return bool(getattr(self._inner, "closed", False) or getattr(self._inner, "broken", False))

    def reconnect(self) -> None:
        """A fresh connection with the old one's session settings, the open transaction's statements run on it."""
        old = self._inner
        fresh = self._connect()
        for attr in ("autocommit", "isolation_level", "read_only", "deferrable"):
            try:
                setattr(fresh, attr, getattr(old, attr))
            except Exception:  # noqa: BLE001 - a setting the driver does not have
                pass
        try:
            old.close()
        except Exception:  # noqa: BLE001 - it is lost already
            pass
        object.__setattr__(self, "_inner", fresh)
        cur = fresh.cursor()
        for method, args, kwargs in list(self._log):
            getattr(cur, method)(*args, **kwargs)


class RetryingCursor:
    def __init__(self, conn: RetryingConnection, args: tuple, kwargs: dict):
        self._conn = conn
        self._args = args
        self._kwargs = kwargs
        self._inner = conn._inner.cursor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __iter__(self):
        return iter(self._inner)

    def _run(self, method: str, args: tuple, kwargs: dict) -> Any:
        conn = self._conn
        tries = 0
        while True:
            try:
                out = getattr(self._inner, method)(*args, **kwargs)
            except Exception:
                if tries >= conn._retries or not conn.lost():
                    raise
                tries += 1
                log.warning("statement failed on a lost database connection; retrying it on a fresh connection "
                            "(%d of %d)", tries, conn._retries)
                conn.reconnect()              # raises when the database cannot be reached: the original fails
                object.__setattr__(conn, "retried", conn.retried + 1)
                self._inner = conn._inner.cursor(*self._args, **self._kwargs)
                continue
            if not getattr(conn._inner, "autocommit", False):
                conn._log.append((method, args, kwargs))
            return out

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        self._run("execute", args, kwargs)
        return self

    def executemany(self, *args: Any, **kwargs: Any) -> Any:
        self._run("executemany", args, kwargs)
        return self


def install(engine: Engine, retries: int) -> None:
    """Every DBAPI connection the engine opens from now on retries a statement failed on a lost connection up
    to `retries` times, on a fresh connection (see the module docstring)."""
    if retries <= 0:
        return
    if hasattr(engine.dialect, "use_native_hstore"):
        engine.dialect.use_native_hstore = False   # psycopg's hstore lookup wants its own Connection class

    @event.listens_for(engine, "do_connect")
    def _connect(dialect, _record, cargs, cparams):
        return RetryingConnection(lambda: dialect.connect(*cargs, **cparams), retries)
