"""The LangChain text splitter and the LlamaIndex node parser, against the real libraries, on the corpus:
offsets true, the same spans as `chunking.chunk`, metadata carried, relationships and ids."""

from __future__ import annotations

import pytest

import chunking
from chunking.embed import Embedder
from tests.conftest import corpus_texts

TEXTS = corpus_texts()
STRATEGIES = ["fixed", "sentence", "paragraph", "markdown", "sliding", "recursive", "semantic", "parent_child",
              "contextual"]


@pytest.fixture(scope="module")
def toy():
    """A fast deterministic embedder for the semantic strategy (no model needed)."""
    return Embedder(lambda texts: [[1.0 + t.count("e"), 1.0 + t.count("a"), 1.0] for t in texts], name="letters",
                    cache=False)


def options(strategy: str, toy) -> dict:
    return {"chunk_size": 120, **({"embedder": toy} if strategy == "semantic" else {})}


def spans(text: str, strategy: str, toy) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in chunking.chunk(text, strategy, **options(strategy, toy))]


# --- LangChain ---------------------------------------------------------------------------------------

class TestLangChain:
    langchain = pytest.importorskip("langchain_text_splitters", reason="pip install 'chunking[langchain]'")

    @pytest.mark.parametrize("strategy", STRATEGIES)
    def test_split_documents_gives_the_chunkers_spans_with_exact_offsets(self, strategy, toy):
        from langchain_core.documents import Document

        from chunking.langchain_splitter import ChunkingTextSplitter

        splitter = ChunkingTextSplitter(strategy, **options(strategy, toy))
        assert isinstance(splitter, self.langchain.TextSplitter)
        documents = [Document(page_content=text, metadata={"source": name}) for name, text in TEXTS.items()]
        split = splitter.split_documents(documents)
        by_source: dict[str, list] = {}
        for d in split:
            by_source.setdefault(d.metadata["source"], []).append(d)
        for name, text in TEXTS.items():
            pieces = by_source[name]
            assert all(text[d.metadata["start_index"] : d.metadata["end_index"]] == d.page_content for d in pieces)
            assert [(d.metadata["start_index"], d.metadata["end_index"]) for d in pieces] == spans(text, strategy, toy)
        assert splitter.split_text(TEXTS["tidal_mills_essay.txt"]) == [
            c.text for c in chunking.chunk(TEXTS["tidal_mills_essay.txt"], strategy, **options(strategy, toy))]

    def test_a_chunks_metadata_and_context_join_the_documents(self):
        from langchain_core.documents import Document

        from chunking.langchain_splitter import ChunkingTextSplitter

        doc = Document(page_content="# Guide\n\nIntro.\n\n## Install\n\nRun it.\n", metadata={"team": "ops"})
        split = ChunkingTextSplitter("markdown", chunk_size=50).transform_documents([doc])
        assert [(d.page_content, d.metadata) for d in split] == [
            ("# Guide\n\nIntro.", {"team": "ops", "heading_path": ["Guide"], "context": "Guide",
                                   "start_index": 0, "end_index": 15}),
            ("## Install\n\nRun it.", {"team": "ops", "heading_path": ["Guide", "Install"],
                                       "context": "Guide > Install", "start_index": 17, "end_index": 36}),
        ]
        assert doc.metadata == {"team": "ops"}  # the input is not changed

    def test_splitting_again_replaces_the_offsets_and_refuses_to_overwrite_other_keys(self):
        from langchain_core.documents import Document

        from chunking.langchain_splitter import ChunkingTextSplitter

        pairs = ChunkingTextSplitter("sentence", chunk_size=2, unit="sentences")
        once = pairs.create_documents(["One. Two. Six. Ten."])
        again = ChunkingTextSplitter("sentence", chunk_size=1, unit="sentences").split_documents(once)
        assert [(d.page_content, d.metadata["start_index"]) for d in again] == [("One.", 0), ("Two.", 5), ("Six.", 0),
                                                                               ("Ten.", 5)]
        clash = Document(page_content="# A\n\nB.", metadata={"heading_path": "mine"})
        with pytest.raises(ValueError, match=r"\['heading_path'\] of the document are also set by the 'markdown'"):
            ChunkingTextSplitter("markdown").split_documents([clash])

    def test_bad_settings_name_themselves(self):
        from chunking.langchain_splitter import ChunkingTextSplitter

        with pytest.raises(ValueError, match="strategy must be one of"):
            ChunkingTextSplitter("words")
        with pytest.raises(TypeError, match=r"'fixed' got unknown option\(s\) \['threshold_type'\]"):
            ChunkingTextSplitter("fixed", threshold_type="std")
        with pytest.raises(ValueError, match="chunk_size must be > 0, got 0"):
            ChunkingTextSplitter("fixed", chunk_size=0).split_text("text")
        with pytest.raises(ValueError, match="one dict per text: got 1 for 2 texts"):
            ChunkingTextSplitter().create_documents(["a", "b"], [{}])
        assert "start_index" not in ChunkingTextSplitter(add_start_index=False).create_documents(["a b"])[0].metadata


# --- LlamaIndex --------------------------------------------------------------------------------------

class TestLlamaIndex:
    llama = pytest.importorskip("llama_index.core", reason="pip install 'chunking[llamaindex]'")

    @pytest.mark.parametrize("strategy", STRATEGIES)
    def test_nodes_have_the_chunkers_spans_and_the_documents_metadata(self, strategy, toy):
        from llama_index.core import Document
        from llama_index.core.schema import NodeRelationship

        from chunking.llamaindex_parser import ChunkingNodeParser

        parser = ChunkingNodeParser(strategy, **options(strategy, toy))
        documents = [Document(text=text, id_=name, metadata={"file": name}) for name, text in TEXTS.items()]
        nodes = parser.get_nodes_from_documents(documents)
        for name, text in TEXTS.items():
            mine = [n for n in nodes if n.ref_doc_id == name]
            assert [(n.start_char_idx, n.end_char_idx) for n in mine] == spans(text, strategy, toy)
            assert all(text[n.start_char_idx : n.end_char_idx] == n.text and n.metadata["file"] == name for n in mine)
            assert all(n.relationships[NodeRelationship.PREVIOUS].node_id == p.node_id for p, n in zip(mine, mine[1:]))
            assert all(n.relationships[NodeRelationship.NEXT].node_id == m.node_id for n, m in zip(mine, mine[1:]))
        assert [n.node_id for n in parser.get_nodes_from_documents(documents)] == [n.node_id for n in nodes]

    @pytest.mark.parametrize("strategy, key", [("markdown", "heading_path"), ("markdown", "context"),
                                               ("parent_child", "parent_start"), ("parent_child", "parent_id")])
    def test_a_document_key_the_strategy_also_sets_is_an_error_not_overwritten(self, strategy, key):
        from llama_index.core import Document

        from chunking.llamaindex_parser import ChunkingNodeParser

        document = Document(text="# A\n\nOne sentence here. Another one there.", id_="a.md", metadata={key: "mine"})
        with pytest.raises(ValueError, match=rf"\['{key}'\] of document 'a.md' are also set by the '{strategy}'"):
            ChunkingNodeParser(strategy, chunk_size=5).get_nodes_from_documents([document])

    def test_a_repeated_passage_keeps_the_offset_the_chunker_cut_at(self):
        """LlamaIndex re-derives offsets by searching from the previous start: "ab" would be found at 3."""
        from llama_index.core import Document

        from chunking.llamaindex_parser import ChunkingNodeParser

        text = "ab ab\n\nab"
        nodes = ChunkingNodeParser("paragraph", chunk_size=5, unit="characters").get_nodes_from_documents(
            [Document(text=text)])
        assert [(n.start_char_idx, n.end_char_idx) for n in nodes] == [(0, 5), (7, 9)]
        assert text.find("ab", 0 + 1) == 3  # where a search from the previous start lands

    def test_the_embedder_reads_the_context_not_the_bookkeeping(self):
        from llama_index.core import Document
        from llama_index.core.schema import MetadataMode

        from chunking.llamaindex_parser import ChunkingNodeParser

        doc = Document(text="# Guide\n\nIntro.\n\n## Install\n\nRun it.\n", metadata={"team": "ops"})
        nodes = ChunkingNodeParser("markdown", chunk_size=50).get_nodes_from_documents([doc])
        assert nodes[1].metadata == {"team": "ops", "heading_path": ["Guide", "Install"], "context": "Guide > Install"}
        assert nodes[1].get_content(metadata_mode=MetadataMode.EMBED) == (
            "team: ops\ncontext: Guide > Install\n\n## Install\n\nRun it.")

    def test_it_runs_in_an_ingestion_pipeline(self):
        from llama_index.core import Document
        from llama_index.core.ingestion import IngestionPipeline

        from chunking.llamaindex_parser import ChunkingNodeParser

        pipeline = IngestionPipeline(transformations=[ChunkingNodeParser("sentence", chunk_size=1, unit="sentences")])
        nodes = pipeline.run(documents=[Document(text="One. Two. Three.", id_="d")])
        assert [(n.text, n.start_char_idx) for n in nodes] == [("One.", 0), ("Two.", 5), ("Three.", 10)]

    def test_bad_settings_name_themselves(self):
        from chunking.llamaindex_parser import ChunkingNodeParser

        with pytest.raises(ValueError, match="strategy must be one of"):
            ChunkingNodeParser("words")
        with pytest.raises(TypeError, match=r"'sentence' got unknown option\(s\) \['separators'\]"):
            ChunkingNodeParser("sentence", separators=["\n"])
