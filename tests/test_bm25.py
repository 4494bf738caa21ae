"""BM25 sparse vectors: tokenizer, unique hashed indices, TF saturation, and hybrid search in Qdrant."""

from __future__ import annotations

import numpy as np
import pytest

from chunking import bm25, chunk, store
from tests.conftest import corpus_texts

RARE = "Restart fails with error E-4471 when the WAL directory is read-only."
FILLER = [
    "The daemon listens on port 7471 unless configured otherwise.",
    "Snapshots are written every ten minutes to the backup volume.",
    "Replication lag stays under a second on the reference machine.",
    "Compaction merges small segments into larger ones overnight.",
    "The query planner picks an index from the collection statistics.",
    "Operators rotate the TLS certificates once a year.",
    "Each collection keeps its own HNSW graph in memory.",
    "Disk usage grows with the number of stored vectors.",
]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", []),
        ("The cat and THE dog.", ["cat", "dog"]),
        ("Error E-4471: ef_search=64", ["error", "e", "4471", "ef_search", "64"]),
        ("__init__ _ snake_case_", ["init", "snake_case"]),
        ("Cafe\u0301 NAÏVE Straße", ["café", "naïve", "strasse"]),
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),
        ("抹茶の点て方", ["抹茶", "茶の", "の点", "点て", "て方"]),
        ("LumenDBの設定", ["lumendb", "の設", "設定"]),
        ("茶", ["茶"]),
        ("１２３ ＡＢＣ", ["123", "abc"]),
        ("안녕하세요 세계", ["안녕하세요", "세계"]),
        ("Thumbs 👍🏽 up 🎉!", ["thumbs"]),
    ],
)
def test_tokenizer_golden(text, tokens):
    assert bm25.tokenize(text) == tokens


def test_term_indices_are_stable_uint32_values():
    assert [bm25.term_index(t) for t in ("lumendb", "4471")] == [2670272908, 2887665047]  # same on every machine
    assert all(0 <= bm25.term_index(t) < 2**32 for t in ("a", "抹茶", "x" * 1000))


@pytest.mark.parametrize("name", sorted(corpus_texts()))
def test_indices_are_unique_and_sorted_in_every_vector(name):
    chunks = [c.text for c in chunk(corpus_texts()[name], "recursive", chunk_size=200)]
    for indices, values in bm25.BM25Encoder().fit(chunks).encode_documents(chunks):
        assert indices == sorted(set(indices)) and len(values) == len(indices)


def test_colliding_terms_are_summed_into_one_index(monkeypatch):
    monkeypatch.setattr(bm25, "term_index", lambda term: 7)
    assert bm25.BM25Encoder().encode_query("alpha beta gamma") == ([7], [3.0])


def test_term_frequency_saturation_golden():
    # lengths 3 and 1: avgdl = 2; k1 = 1.2, b = 0.75
    encoder = bm25.BM25Encoder().fit(["cat cat dog", "dog"])
    first, second = (dict(zip(*v)) for v in encoder.encode_documents(["cat cat dog", "dog"]))
    cat, dog = bm25.term_index("cat"), bm25.term_index("dog")
    assert encoder.avgdl == 2.0
    assert first == pytest.approx({cat: 4.4 / 3.65, dog: 2.2 / 2.65})  # norm = 1.2·(0.25 + 0.75·1.5) = 1.65
    assert second == pytest.approx({dog: 2.2 / 1.75})  # norm = 1.2·(0.25 + 0.75·0.5) = 0.75


def test_saturation_flattens_repeated_terms():
    encoder = bm25.BM25Encoder().fit(["word"])
    weights = [encoder.encode_documents([" ".join(["word"] * n)])[0][1][0] for n in (1, 2, 10, 100)]
    assert weights == sorted(weights) and weights[-1] < encoder.k1 + 1


def test_query_weights_each_distinct_term_once():
    indices, values = bm25.BM25Encoder().encode_query("cat Cat dog the")
    assert indices == sorted([bm25.term_index("cat"), bm25.term_index("dog")]) and values == [1.0, 1.0]


def test_encoding_before_fitting_is_an_error():
    with pytest.raises(ValueError, match="fit"):
        bm25.BM25Encoder().encode_documents(["text"])


@pytest.mark.parametrize(("kwargs", "name"), [({"k1": -1}, "k1"), ({"b": 1.5}, "b"), ({"b": True}, "b")])
def test_bad_parameters_are_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        bm25.BM25Encoder(**kwargs)


def unit_vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, 16)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def indexed():
    """Filler chunks plus one with a rare error code, random dense vectors, BM25 sparse vectors."""
    texts = {"ops.md": FILLER[:5] + [RARE], "other.md": FILLER[5:]}
    chunks = [c for doc, parts in texts.items()
              for c in chunk("\n\n".join(parts), "paragraph", chunk_size=None, doc_id=doc)]
    encoder = bm25.BM25Encoder().fit([c.embed_text for c in chunks])
    client = store.connect(":memory:")
    store.ensure_collection(client, "hybrid", 16)
    store.index(client, "hybrid", chunks, unit_vectors(len(chunks), seed=0),
                sparse=encoder.encode_documents([c.embed_text for c in chunks]))
    target = next(c for c in chunks if "E-4471" in c.text)
    scores = unit_vectors(len(chunks), seed=0) @ unit_vectors(1, seed=1)[0]
    dense_rank = [chunks[i] for i in np.argsort(-scores)].index(target)
    yield client, encoder, target, dense_rank
    client.close()


def test_dense_alone_does_not_rank_the_error_code_first(indexed):
    client, _, target, dense_rank = indexed
    assert dense_rank >= 3
    assert target not in [h.chunk for h in store.search(client, "hybrid", unit_vectors(1, seed=1)[0], k=3)]


def test_bm25_finds_the_exact_rare_keyword(indexed):
    client, encoder, target, _ = indexed
    hits = bm25.sparse_search(client, "hybrid", encoder.encode_query("What does E-4471 mean?"), k=3)
    assert hits[0].chunk == target


def test_hybrid_search_finds_the_rare_keyword_dense_misses(indexed):
    client, encoder, target, _ = indexed
    hits = bm25.hybrid_search(client, "hybrid", unit_vectors(1, seed=1)[0], encoder.encode_query("E-4471"), k=3)
    assert target in [h.chunk for h in hits]


def test_hybrid_search_keeps_one_document(indexed):
    client, encoder, _, _ = indexed
    hits = bm25.hybrid_search(client, "hybrid", unit_vectors(1, seed=1)[0], encoder.encode_query("E-4471"),
                              k=5, doc_id="other.md")
    assert hits and {h.chunk.doc_id for h in hits} == {"other.md"}


def test_a_stopword_query_has_no_bm25_side(indexed):
    client, encoder, _, _ = indexed
    query = encoder.encode_query("what is the")
    dense = [h.chunk for h in store.search(client, "hybrid", unit_vectors(1, seed=1)[0], k=3)]
    assert bm25.sparse_search(client, "hybrid", query, k=3) == []
    assert [h.chunk for h in bm25.hybrid_search(client, "hybrid", unit_vectors(1, seed=1)[0], query, k=3)] == dense


@pytest.mark.parametrize(("kwargs", "name"), [({"k": 0}, "k"), ({"prefetch_k": 2, "k": 5}, "prefetch_k")])
def test_bad_limits_are_named(indexed, kwargs, name):
    client, encoder, _, _ = indexed
    with pytest.raises(ValueError, match=name):
        bm25.hybrid_search(client, "hybrid", unit_vectors(1, seed=1)[0], encoder.encode_query("x"), **kwargs)
