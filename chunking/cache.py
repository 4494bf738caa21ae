"""The on-disk cache the embedder and the LLM client share: one SQLite table of key → bytes.

1. `open_cache(file, cache)` gives a `Cache`, or None when caching is off: `cache` is True (the
   default folder, `~/.cache/chunking` or `$CHUNKING_CACHE_DIR`), a folder, or False;
   `CHUNKING_CACHE=off` turns every cache off.
2. `Cache.get(keys)` returns the values found, reading in batches of 500 keys; `Cache.put` writes
   many values in one transaction.
3. A cache never stops the work it speeds up. A file that cannot be read (truncated, not a
   database, a table of another shape, a folder in its place) is not used; one that cannot be
   written (read-only, a full disk) is only read. Either way the caller carries on — what it
   computed is returned, just not kept — and one warning per file says which file, why, and the fix.
Keys are digests the caller makes of everything that changes a value (the model and the text, the
endpoint and the prompt); values are bytes — float32 vectors, or UTF-8 text — which the caller
checks, since a damaged file can hold anything. SQLite makes it safe for several processes at once
(pytest workers, a notebook and the command line).
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

CACHE_ENV = "CHUNKING_CACHE"
CACHE_DIR_ENV = "CHUNKING_CACHE_DIR"
BATCH = 500  # keys per SELECT (SQLite caps the parameters of one statement)
COLUMNS = ["key", "value"]
_warned: set[tuple[str, str]] = set()  # (file, what failed): each is said once per process


class Cache:
    """A key → bytes table in one SQLite file; it stops reading or writing, with a warning, on a fault."""

    def __init__(self, path: Path) -> None:
        self.path, self.db, self.writable = path, None, True
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
            self.db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB)")
            columns = [row[1] for row in self.db.execute("PRAGMA table_info(entries)")]
            if columns != COLUMNS:
                raise sqlite3.DatabaseError(f"its table 'entries' has the columns {columns}, not {COLUMNS}")
            self._adopt_earlier_tables()
        except (sqlite3.Error, OSError) as error:
            self._unusable(error)

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
        """The values stored under `keys` (missing keys are left out; all of them once the file is unusable)."""
        if self.db is None:
            return {}
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(keys))
        try:
            for i in range(0, len(unique), BATCH):
                part = unique[i : i + BATCH]
                rows = self.db.execute(f"SELECT key, value FROM entries WHERE key IN ({','.join('?' * len(part))})",
                                       part)
                found.update((key, value) for key, value in rows if isinstance(value, bytes))
        except sqlite3.Error as error:
            self._unusable(error)
            return {}
        return found

    def put(self, values: Mapping[str, bytes]) -> None:
        """Store (or replace) every value, in one transaction; nothing (after one warning) if it cannot."""
        if self.db is None or not self.writable or not values:
            return
        try:
            with self.db:
                self.db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", list(values.items()))
        except sqlite3.Error as error:
            self.writable = False
            _warn(self.path, "written", f"{error}; carrying on without keeping new entries in it: free disk space, "
                  f"make it writable, delete it, or set {CACHE_ENV}=off")

    def _unusable(self, error: BaseException) -> None:
        if self.db is not None:
            self.db.close()
        self.db = None
        _warn(self.path, "used", f"{error}; carrying on without it: delete it (a new one is made), or set "
              f"{CACHE_ENV}=off or {CACHE_DIR_ENV} to another folder")


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


def _warn(path: Path, what: str, detail: str) -> None:
    if (str(path), what) not in _warned:
        _warned.add((str(path), what))
        warnings.warn(f"the cache {str(path)!r} cannot be {what} ({detail})", RuntimeWarning, stacklevel=3)
