"""The on-disk cache the embedder and the LLM client share: one SQLite table of key → bytes.

1. `open_cache(file, cache)` gives a `Cache`, or None when caching is off: `cache` is True (the
   default folder, `~/.cache/chunking` or `$CHUNKING_CACHE_DIR`), a folder, or False;
   `CHUNKING_CACHE=off` turns every cache off.
2. `Cache.get(keys)` returns the values found, reading in batches of 500 keys; `Cache.put` writes
   many values in one transaction.
Keys are digests the caller makes of everything that changes a value (the model and the text, the
endpoint and the prompt); values are bytes — float32 vectors, or UTF-8 text. SQLite makes it safe
for several processes at once (pytest workers, a notebook and the command line).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

CACHE_ENV = "CHUNKING_CACHE"
CACHE_DIR_ENV = "CHUNKING_CACHE_DIR"
BATCH = 500  # keys per SELECT (SQLite caps the parameters of one statement)


class Cache:
    """A key → bytes table in one SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB)")
        self._adopt_earlier_tables()

    def _adopt_earlier_tables(self) -> None:
        """Move the rows of the tables earlier versions wrote (`vectors`, `answers`) into `entries`,
        so an existing cache stays warm; their keys are made the same way."""
        tables = {name for (name,) in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table, value in (("vectors", "vector"), ("answers", "CAST(answer AS BLOB)")):
            if table in tables:
                with self.db:
                    self.db.execute(f"INSERT OR IGNORE INTO entries SELECT key, {value} FROM {table}")
                    self.db.execute(f"DROP TABLE {table}")

    def get(self, keys: Sequence[str]) -> dict[str, bytes]:
        """The values stored under `keys` (missing keys are left out)."""
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), BATCH):
            part = unique[i : i + BATCH]
            rows = self.db.execute(f"SELECT key, value FROM entries WHERE key IN ({','.join('?' * len(part))})", part)
            found.update(rows)
        return found

    def put(self, values: Mapping[str, bytes]) -> None:
        """Store (or replace) every value, in one transaction."""
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", list(values.items()))


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_DIR_ENV) or Path.home() / ".cache" / "chunking")


def enabled(cache: bool | str | Path) -> bool:
    """Is caching on: `cache` is not False and `$CHUNKING_CACHE` is not off?"""
    return cache is not False and os.environ.get(CACHE_ENV, "on").lower() not in ("0", "off", "false", "no")


def open_cache(file: str, cache: bool | str | Path = True) -> Cache | None:
    """The cache in `file` of the default folder (or of the folder `cache`), or None when off."""
    if not enabled(cache):
        return None
    return Cache((default_cache_dir() if cache is True else Path(cache)) / file)
