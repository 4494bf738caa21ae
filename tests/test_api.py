"""The shared API: one entry point, one option vocabulary, clear errors, immutable chunks."""

from __future__ import annotations

import dataclasses
import gc

import pytest

from chunking import STRATEGIES, Chunk, check_chunks, chunk

TEXT = "Alpha beta. Gamma delta.\n\nEpsilon zeta."


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("bad", [b"bytes", None, 42, ["list"]])
def test_non_str_text_is_a_type_error(strategy, bad):
    with pytest.raises(TypeError, match="text must be str"):
        chunk(bad, strategy)


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize(
    ("options", "error", "names"),
    [
        ({"chunk_size": 0}, ValueError, "chunk_size"),
        ({"chunk_size": -5}, ValueError, "chunk_size"),
        ({"chunk_size": "200"}, TypeError, "chunk_size"),
        ({"chunk_size": True}, TypeError, "chunk_size"),
        ({"chunk_size": 10, "chunk_overlap": -1}, ValueError, "chunk_overlap"),
        ({"chunk_size": 10, "chunk_overlap": 10}, ValueError, "chunk_overlap"),
        ({"chunk_size": 10, "chunk_overlap": 1.5}, ValueError, "chunk_overlap"),
        ({"unit": "bytes"}, ValueError, "unit"),
        ({"chunk_sise": 10}, TypeError, "chunk_sise"),
    ],
)
def test_bad_options_name_the_parameter_and_value(strategy, options, error, names):
    with pytest.raises(error, match=names) as info:
        chunk(TEXT, strategy, **options)
    value = next(iter(options.values())) if names != "chunk_overlap" else options["chunk_overlap"]
    if names != "chunk_sise":
        assert repr(value) in str(info.value)


def test_unknown_strategy_lists_the_choices():
    with pytest.raises(ValueError, match="strategy must be one of") as info:
        chunk(TEXT, "semantical")
    assert "'semantical'" in str(info.value) and "recursive" in str(info.value)


def test_unit_sentences_only_where_it_means_something():
    with pytest.raises(ValueError, match="unit='sentences'"):
        chunk(TEXT, "recursive", unit="sentences")


def test_chunks_are_immutable():
    c = chunk(TEXT, "sentence")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.start = 3
    with pytest.raises(TypeError):
        c.metadata["x"] = 1


@pytest.mark.parametrize("context, metadata", [(None, None), (["ctx", ""], [{"page": 2}, {}])])
def test_make_chunks_builds_what_the_dataclass_builds(context, metadata):
    from chunking.types import make_chunks

    source = "One two. Three four."
    made = make_chunks(source, [(0, 8), (9, 20)], strategy="s", doc_id="d", context=context, metadata=metadata)
    plain = [dataclasses.replace(c) for c in made]  # through Chunk.__init__ and __post_init__
    assert made == plain and [vars(c) for c in made] == [vars(c) for c in plain]
    assert all(type(c.metadata) is type(p.metadata) for c, p in zip(made, plain))
    assert [c.metadata for c in made] == [p.metadata for p in plain]
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].start = 1
    assert set(vars(made[0])) == {f.name for f in dataclasses.fields(made[0])}
    from chunking.registry import with_metadata

    for c in made:
        again, plain = with_metadata(c, {"kind": "md"}), dataclasses.replace(c, metadata={"kind": "md"})
        assert again == plain and vars(again) == vars(plain) and type(again.metadata) is type(plain.metadata)


def test_ids_are_deterministic_and_depend_on_document_strategy_and_span():
    a = chunk(TEXT, "sentence", doc_id="doc-1")
    assert [c.id for c in a] == [c.id for c in chunk(TEXT, "sentence", doc_id="doc-1")]
    assert a[0].id != chunk(TEXT, "sentence", doc_id="doc-2")[0].id
    assert a[0].id != chunk(TEXT, "paragraph", doc_id="doc-1")[0].id


def test_repr_is_stable_and_short():
    c = chunk("Hello world. " * 10, "fixed", chunk_size=3)[0]
    assert repr(c) == "Chunk(index=0, span=(0, 12), text='Hello world.')"


def test_token_count_is_cl100k():
    assert chunk("Hello world.", "sentence")[0].token_count == 3


def test_embed_text_without_context_is_the_text():
    c = Chunk(text="abc", start=0, end=3, index=0)
    assert c.embed_text == "abc"
    assert dataclasses.replace(c, context="Title").embed_text == "Title\n\nabc"


@pytest.mark.parametrize(
    ("chunks", "problem"),
    [
        ([Chunk("Alpha", 0, 5, 0), Chunk("XXXX", 6, 10, 1)], "differs from source"),
        ([Chunk("Alpha beta.", 0, 11, 1)], "index is 1"),
        ([Chunk("beta.", 6, 11, 0), Chunk("Alpha", 0, 5, 1)], "out of order"),
        ([Chunk("Alpha beta.", 0, 11, 0)], "is in no chunk"),
        ([Chunk(" ", 5, 6, 0)], "whitespace only"),
    ],
)
def test_check_chunks_catches_each_broken_invariant(chunks, problem):
    with pytest.raises(ValueError, match=problem):
        check_chunks(TEXT, chunks)


def test_check_chunks_catches_a_broken_bound():
    with pytest.raises(ValueError, match="exceeds chunk_size=3"):
        chunks = chunk(TEXT, "paragraph", chunk_size=None)
        check_chunks(TEXT, chunks, chunk_size=3, length=len, coverage=False)


def test_each_strategy_module_is_importable_on_its_own():
    from chunking import sentence

    assert sentence.chunk(TEXT)[0].strategy == "sentence"


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_is_paused_during_a_call_and_restored_after(enabled):
    seen = []

    def unit(text: str) -> int:
        seen.append(gc.isenabled())
        return len(text)

    (gc.enable if enabled else gc.disable)()
    try:
        chunk(TEXT, "recursive", chunk_size=12, unit=unit)
        assert seen and not any(seen)
        assert gc.isenabled() is enabled
        with pytest.raises(ZeroDivisionError):
            chunk(TEXT, "recursive", chunk_size=12, unit=lambda text: 1 // 0)
        assert gc.isenabled() is enabled  # restored after an error too
    finally:
        gc.enable()
