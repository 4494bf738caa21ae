"""Option checks shared by the package: one message shape, naming the option and the value.

`chunk_size` and `chunk_overlap` mean the same everywhere: the size bound in the unit, and an
overlap that is absolute (an int, in the unit) or a fraction of `chunk_size` (a float in [0, 1)).
Each check raises `TypeError` or `ValueError` naming the option and the value received. Every
option has one name and one meaning across the package (a float `chunk_overlap` is a fraction of
`chunk_size` in every strategy).
"""

from __future__ import annotations

import math
import numbers


def check_text(text: object, name: str = "text") -> str:
    """`text` if it is a `str` of valid Unicode; a lone surrogate ("\\ud800") is refused at its offset."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be str, got {type(text).__name__}: {text!r:.60}")
    if not text.isascii():
        try:
            text.encode("utf-8")  # fails at the first lone surrogate; in C, faster than a regex search
        except UnicodeEncodeError as error:
            raise ValueError(
                f"{name} holds a lone surrogate {text[error.start]!r} at offset {error.start}: not valid Unicode; "
                "decode the source with errors='replace'"
            ) from None
    return text


def check_flag(name: str, value: object) -> bool:
    """`value` if it is a bool."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def check_int(name: str, value: object, low: int = 1, high: int | None = None) -> int:
    """`value` as an int if it is an integer (not a bool; numpy's too) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low or (
            high is not None and value > high):
        bound = f">= {low}" + (f" and <= {high}" if high is not None else "")
        raise ValueError(f"{name} must be an int {bound}, got {value!r}")
    return int(value)


def resolve_minimum(min_chunk_size: object, size: int | None) -> int | None:
    """`min_chunk_size`: None (no merging), or an int from 1 up to `size` (the chunk size, if any)."""
    if min_chunk_size is None:
        return None
    return check_int("min_chunk_size" + (" (at most chunk_size)" if size else ""), min_chunk_size, 1, size)


def check_number(name: str, value: object, low: float = -math.inf, high: float = math.inf) -> float:
    """`value` as a float if it is a finite real number (not a bool) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise ValueError(f"{name} must be a number in [{low:g}, {high:g}], got {value!r}")
    return float(value)


def one_line(message: object, limit: int = 500) -> str:
    """An error message on one line (for the command line and wrapped errors)."""
    return " ".join(str(message).split())[:limit] or type(message).__name__


def resolve_sizes(chunk_size: object, chunk_overlap: object = 0) -> tuple[int, int]:
    """Validate `chunk_size` and `chunk_overlap`; return both as ints in the unit.

    A float overlap in [0, 1) is a fraction of `chunk_size`; an int is absolute.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        raise TypeError(f"chunk_size must be an int, got {chunk_size!r}")
    if chunk_size <= 0:
        raise ValueError(f"chunk_size must be > 0, got {chunk_size!r}")
    if isinstance(chunk_overlap, float):
        if not 0.0 <= chunk_overlap < 1.0:
            raise ValueError(f"chunk_overlap as a float is a fraction of chunk_size and must be in [0, 1), "
                             f"got {chunk_overlap!r}")
        chunk_overlap = int(chunk_overlap * chunk_size)
    elif isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int):
        raise TypeError(f"chunk_overlap must be an int or a float fraction, got {chunk_overlap!r}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError(f"chunk_overlap must be >= 0 and < chunk_size={chunk_size}, got {chunk_overlap!r}")
    return chunk_size, chunk_overlap
