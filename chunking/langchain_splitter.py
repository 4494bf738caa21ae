"""LangChain: any strategy as a text splitter, with the offsets the chunker cut at.

1. `ChunkingTextSplitter(strategy, **options)` is a `langchain_text_splitters.TextSplitter`, so it
   goes wherever LangChain takes one: `split_text`, `create_documents`, `split_documents`,
   `transform_documents`. `options` are the strategy's own (`chunk_size`, `unit`, `embedder`…).
2. Each Document's metadata gets `start_index` and `end_index`: the chunk's half-open character
   offsets into the text it came from, as the chunker cut it. LangChain's own splitters recover
   `start_index` afterwards by searching the text for the chunk's string from a guessed position
   (and give no end); here nothing is searched.
3. The chunk's metadata (a heading path, a parent's span…) joins the document's; a key in both is
   an error rather than a silent overwrite. A chunk's `context` (the heading path the embedder
   should read above the text) is `metadata["context"]`.

Install with `pip install 'chunking[langchain]'` (langchain-text-splitters). Shown in notebook 14.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from langchain_core.documents import Document
from langchain_text_splitters import TextSplitter

from chunking import registry
from chunking.types import Chunk

OFFSET_KEYS = ("start_index", "end_index")  # set on every Document, replacing any earlier split's


class ChunkingTextSplitter(TextSplitter):
    """A LangChain text splitter running one of this package's strategies.

    >>> splitter = ChunkingTextSplitter("sentence", chunk_size=1, unit="sentences")
    >>> [(d.page_content, d.metadata["start_index"], d.metadata["end_index"])
    ...  for d in splitter.create_documents(["Yes. No. Yes."])]
    [('Yes.', 0, 4), ('No.', 5, 8), ('Yes.', 9, 13)]
    """

    def __init__(self, strategy: str = "recursive", *, add_start_index: bool = True, **options: Any) -> None:
        registry.check_strategy(strategy, options)  # fail on construction, not on the first document
        if "doc_id" in options:
            raise TypeError("doc_id is not an option here: each Document is chunked on its own")
        size = options.get("chunk_size")
        # The base class keeps these for its own merging helpers, which this splitter never calls.
        super().__init__(chunk_size=size if isinstance(size, int) and size > 0 else 1, chunk_overlap=0,
                         add_start_index=add_start_index, strip_whitespace=False)
        self.strategy, self.options = strategy, options

    def chunks(self, text: str) -> list[Chunk]:
        """The chunks of `text`, as this package returns them (offsets, context, metadata)."""
        return registry.chunk(text, self.strategy, **self.options)

    def split_text(self, text: str) -> list[str]:
        return [c.text for c in self.chunks(text)]

    def create_documents(self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None) -> list[Document]:
        """One Document per chunk of each text, with `start_index`/`end_index` and the chunk's metadata."""
        texts = list(texts)
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(f"metadatas must have one dict per text: got {len(metadatas)} for {len(texts)} texts")
        documents = []
        for i, text in enumerate(texts):
            base = metadatas[i] if metadatas is not None else {}
            for c in self.chunks(text):
                documents.append(Document(page_content=c.text, metadata=self._metadata(base, c)))
        return documents

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        documents = list(documents)
        return self.create_documents([d.page_content for d in documents], [d.metadata for d in documents])

    def _metadata(self, base: dict, c: Chunk) -> dict:
        metadata = copy.deepcopy(base)
        own = {k: list(v) if isinstance(v, tuple) else v for k, v in c.metadata.items()}
        if c.context:
            own["context"] = c.context
        if clash := sorted(own.keys() & (metadata.keys() - set(OFFSET_KEYS))):
            raise ValueError(f"metadata key(s) {clash} of the document are also set by the {self.strategy!r} "
                             "strategy; rename them")
        metadata.update(own)
        if self._add_start_index:
            metadata.update(zip(OFFSET_KEYS, (c.start, c.end)))
        return metadata
