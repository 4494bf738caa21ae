"""LlamaIndex: any strategy as a node parser, with exact character offsets on every node.

1. `ChunkingNodeParser(strategy, **options)` is a `llama_index.core.node_parser.NodeParser`:
   `parser.get_nodes_from_documents(documents)`, or a transformation in an `IngestionPipeline`.
2. Each `TextNode` has `start_char_idx`/`end_char_idx` as the chunker cut them. LlamaIndex's base
   class re-derives both by searching the document for the node's text after parsing, which can
   land on another occurrence of a repeated passage; this parser puts the chunker's offsets back.
3. A node carries the document's metadata (merged by the base class), the chunk's own (a heading
   path, a parent's span…), `context` when the strategy gives one, SOURCE / PREVIOUS / NEXT
   relationships, and a deterministic id: the chunk's uuid5 (document id, strategy, offsets), so
   re-ingesting a document gives the same node ids. A document key the strategy also sets (say
   `heading_path`) is an error, as in the LangChain splitter and `chunking.chunk_document`, not a
   silent overwrite. The chunk's own metadata is kept out of what
   the embedder and the LLM read, except `context`, so a node embeds like `chunk.embed_text`.

Install with `pip install 'chunking[llamaindex]'` (llama-index-core). Shown in notebook 14.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.node_parser import NodeParser
from llama_index.core.schema import BaseNode, Document, MetadataMode, NodeRelationship, TextNode
from llama_index.core.utils import get_tqdm_iterable
from pydantic import Field

from chunking import registry


class ChunkingNodeParser(NodeParser):
    """A LlamaIndex node parser running one of this package's strategies."""

    strategy: str = Field(default="recursive", description="a strategy of chunking.STRATEGIES")
    options: dict = Field(default_factory=dict, description="the strategy's keyword options")

    def __init__(self, strategy: str = "recursive", **options: Any) -> None:
        registry.check_strategy(strategy, options)  # fail on construction, not on the first document
        if "doc_id" in options:
            raise TypeError("doc_id is not an option here: each node's id is its document id")
        super().__init__(strategy=strategy, options=options)

    @classmethod
    def class_name(cls) -> str:
        return "ChunkingNodeParser"

    def _parse_nodes(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> list[BaseNode]:
        parsed: list[BaseNode] = []
        for node in get_tqdm_iterable(nodes, show_progress, "Chunking"):
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            for c in registry.chunk(text, self.strategy, doc_id=node.node_id, **self.options):
                own = {k: list(v) if isinstance(v, tuple) else v for k, v in c.metadata.items()}
                hidden = sorted(own)  # the embedder and the LLM read the context, not spans or ids
                if c.context:
                    own["context"] = c.context
                if clash := sorted(own.keys() & node.metadata.keys()):  # the base class would let the document win
                    raise ValueError(f"metadata key(s) {clash} of document {node.node_id!r} are also set by the "
                                     f"{self.strategy!r} strategy; rename them")
                parsed.append(TextNode(
                    id_=c.id, text=c.text, start_char_idx=c.start, end_char_idx=c.end, metadata=own,
                    excluded_embed_metadata_keys=[*node.excluded_embed_metadata_keys, *hidden],
                    excluded_llm_metadata_keys=[*node.excluded_llm_metadata_keys, *hidden],
                    metadata_separator=node.metadata_separator, metadata_template=node.metadata_template,
                    text_template=node.text_template,
                    relationships={NodeRelationship.SOURCE: node.as_related_node_info()},
                ))
        return parsed

    def _postprocess_parsed_nodes(self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]) -> list[BaseNode]:
        exact = [(n.start_char_idx, n.end_char_idx) if isinstance(n, TextNode) else None for n in nodes]
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)  # metadata, prev/next; offsets by search
        for node, offsets in zip(nodes, exact):
            if offsets is not None:
                node.start_char_idx, node.end_char_idx = offsets
        return nodes
