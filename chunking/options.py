"""Option checks shared by the package: one message shape, naming the option and the value.

`chunk_size` and `chunk_overlap` mean the same everywhere: the size bound in the unit, and an
overlap that is absolute (an int, in the unit) or a fraction of `chunk_size` (a float in [0, 1)).
Each check raises `TypeError` or `ValueError` naming the option and the value received; a renamed
option keeps working for a while, with a `DeprecationWarning` naming its new name (`renamed`).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence


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


def valid_text(text: str) -> str:
    """`text` with each lone surrogate made U+FFFD, as a decoder does with errors="replace" (a PDF's
    broken text map or JSON's "\\ud800" escape yields them): nothing else changes, and the text can then
    be written as UTF-8."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


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


def check_texts(texts: object, hint: str = "") -> list[str]:
    """`texts` as a list if it is a sequence of `str` (a single `str` is refused: it is not a list of texts)."""
    if isinstance(texts, str) or not isinstance(texts, Sequence) or not all(isinstance(t, str) for t in texts):
        raise TypeError(f"texts must be a sequence of str{hint}, got {type(texts).__name__}: {texts!r:.60}")
    return list(texts)


def renamed(old: str, new: str, old_value: object, new_value: object, new_default: object) -> object:
    """The value of an option renamed from `old` to `new`: the old spelling still works until the next
    minor version, with a `DeprecationWarning` naming the new one; giving both is an error."""
    if old_value is None:
        return new_value
    if new_value != new_default:
        raise TypeError(f"give {new} (or the deprecated {old}), not both")
    warnings.warn(f"{old} is deprecated and will be removed in the next minor version; use {new}",
                  DeprecationWarning, stacklevel=3)
    return old_value


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
