"""chunking: text chunking for retrieval-augmented generation, with exact offsets.

Every chunk is a span of its source: `source[c.start:c.end] == c.text`, for every strategy.

>>> from chunking import chunk
>>> [c.text for c in chunk("One. Two. Three.", "sentence", chunk_size=2, unit="sentences")]
['One. Two.', 'Three.']

The package root only re-exports, each name imported on first use: `import chunking.fixed` loads
the core and `fixed`, nothing else. The layers are in the README ("Architecture").
"""

from __future__ import annotations

import importlib
import importlib.util

__version__ = "0.1.0"

_EXPORTS = {  # name -> the module that defines it
    "STRATEGIES": "registry", "check_strategy": "registry", "chunk": "registry", "chunk_document": "registry",
    "chunk_documents": "registry", "takes": "registry",
    "Chunk": "types", "Document": "documents", "check_chunks": "checks",
    "count_tokens": "tokens", "get_encoding": "tokens",
    "load_corpus": "load", "load_document": "load",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"chunking.{_EXPORTS[name]}"), name)
    elif importlib.util.find_spec(f"chunking.{name}") is not None:  # a module: chunking.markdown, …
        value = importlib.import_module(f"chunking.{name}")
    else:
        raise AttributeError(f"module 'chunking' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
