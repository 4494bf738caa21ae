"""Indexing on Ray Data (`chunking.ray_index`, `chunking index --engine ray`), on this machine's cores.

Every run is held to the plain path: the same points (ids, offsets, payloads) as `chunking index` on
the same files, vectors the workers computed themselves within cosine 0.99999 of the plain path's,
nothing written twice, and the store left as the plain path leaves it after edits and interruptions.
One Ray serves the module (its start-up costs seconds), so the module's tests share one test process.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from chunking import cli, ray_index, store
from chunking.load import corpus_files

pytestmark = pytest.mark.xdist_group("ray")

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus"
SOME = ("harbor_cycles_faq.md", "night_train_handbook.html", "tidal_mills_essay.txt")


@pytest.fixture(scope="module")
def ray_here():
    import ray

    ray_index.start()
    yield ray
    ray.shutdown()


@pytest.fixture(autouse=True)
def no_qdrant_server(monkeypatch):
    monkeypatch.delenv(store.URL_ENV, raising=False)
    monkeypatch.delenv(store.KEY_ENV, raising=False)


def corpus(folder: Path, names=SOME) -> Path:
    folder.mkdir()
    for name in names:
        shutil.copy(CORPUS / name, folder / name)
    return folder


def points(folder: Path, name: str = "chunks") -> dict[str, tuple[dict, np.ndarray]]:
    """Every point of a local collection: id -> (payload, dense vector)."""
    client = store.connect(folder, use_env=False)
    try:
        found, offset = {}, None
        while True:
            batch, offset = client.scroll(name, limit=1000, offset=offset, with_payload=True, with_vectors=True)
            found.update({str(p.id): (p.payload, np.array(p.vector[store.DENSE])) for p in batch})
            if offset is None:
                return found
    finally:
        client.close()


def plain(docs: Path, folder: Path, *flags: str) -> dict:
    assert cli.main(["index", str(docs), "--path", str(folder), *flags]) == 0
    return points(folder)


def assert_same_points(got: dict, expected: dict) -> None:
    assert got.keys() == expected.keys()
    for key, (payload, vector) in expected.items():
        assert got[key][0] == payload
        assert float(np.dot(got[key][1], vector)) > 0.99999


def test_ray_writes_the_points_chunking_index_writes_and_keeps_them_in_step(ray_here, tmp_path, capsys):
    docs = corpus(tmp_path / "docs")
    expected = plain(docs, tmp_path / "plain", "--strategy", "fixed", "--chunk-size", "100")
    files = corpus_files(docs)
    kwargs = {"strategy": "fixed", "options": {"chunk_size": 100}, "path": tmp_path / "ray", "workers": 2}

    first = ray_index.index_files(files, "chunks", cache=False, **kwargs)  # the workers compute every vector
    assert_same_points(points(tmp_path / "ray"), expected)
    assert (first.documents, first.chunks, first.written, first.stale, first.points, first.workers) == (
        3, len(expected), len(expected), 0, len(expected), 2)

    again = ray_index.index_files(files, "chunks", **kwargs)  # idempotent: nothing new to embed or write
    assert (again.written, again.stale, again.points) == (0, 0, len(expected))
    assert_same_points(points(tmp_path / "ray"), expected)

    essay = docs / "tidal_mills_essay.txt"  # an edited file: its new chunks written, its old ones removed
    essay.write_text(essay.read_text(encoding="utf-8")[: 3000], encoding="utf-8")
    edited = plain(docs, tmp_path / "plain", "--strategy", "fixed", "--chunk-size", "100")
    report = ray_index.index_files(files, "chunks", **kwargs)
    assert report.stale == len(expected) - len(edited.keys() & expected.keys()) > 0
    assert report.written == len(edited.keys() - expected.keys()) > 0
    assert_same_points(points(tmp_path / "ray"), edited)


def test_an_interrupted_run_is_finished_by_running_it_again(ray_here, tmp_path):
    """A file that cannot be read stops the run with its own error; what was written stays written,
    and the re-run writes exactly the rest."""
    docs = tmp_path / "notes"
    docs.mkdir()
    for i in range(60):
        (docs / f"note_{i:03d}.txt").write_text(f"Note {i}: the pump in bay {i % 7} was serviced on day {i}.\n")
    (docs / "note_030.pdf").write_bytes(b"%PDF-1.4 this is not a PDF")
    kwargs = {"strategy": "sentence", "options": {"chunk_size": 50}, "path": tmp_path / "ray", "workers": 2}
    with pytest.raises(ValueError, match=r"note_030\.pdf' is not a readable PDF \(") as caught:
        ray_index.index_files(corpus_files(docs), "chunks", **kwargs)
    assert "\n" not in str(caught.value)  # one line: Ray's retry advice is not the user's business
    kept = len(points(tmp_path / "ray"))
    (docs / "note_030.pdf").unlink()
    report = ray_index.index_files(corpus_files(docs), "chunks", **kwargs)
    assert report.written == 60 - kept and report.points == 60
    assert_same_points(points(tmp_path / "ray"), plain(docs, tmp_path / "plain", "--strategy", "sentence",
                                                       "--chunk-size", "50"))


def test_semantic_chunking_runs_in_the_model_workers(ray_here, tmp_path):
    docs = corpus(tmp_path / "docs", ("harbor_cycles_faq.md",))
    expected = plain(docs, tmp_path / "plain", "--strategy", "semantic", "--chunk-size", "120")
    report = ray_index.index_files(corpus_files(docs), "chunks", strategy="semantic", options={"chunk_size": 120},
                                   path=tmp_path / "ray", workers=1)
    assert report.points == len(expected) and report.workers == 1
    assert_same_points(points(tmp_path / "ray"), expected)


def test_the_command_line_indexes_on_ray(ray_here, tmp_path, capsys):
    docs = corpus(tmp_path / "docs", ("harbor_cycles_faq.md",))
    expected = plain(docs, tmp_path / "plain", "--metadata", '{"team": "ops"}')
    capsys.readouterr()
    assert cli.main(["index", str(docs), "--engine", "ray", "--workers", "1", "--path", str(tmp_path / "ray"),
                     "--metadata", '{"team": "ops"}']) == 0
    out = capsys.readouterr().out
    assert f"on Ray (1 worker): {len(expected)} written, 0 stale removed, {len(expected)} in the collection" in out
    assert_same_points(points(tmp_path / "ray"), expected)
    assert all(payload["metadata"]["team"] == "ops" for payload, _ in points(tmp_path / "ray").values())


def test_bad_arguments_are_named(ray_here, tmp_path, capsys):
    docs = corpus(tmp_path / "docs", ("harbor_cycles_faq.md",))
    files = corpus_files(docs)
    with pytest.raises(ValueError, match=r"workers must be .* got 0"):
        ray_index.index_files(files, "c", path=tmp_path / "q", workers=0)
    with pytest.raises(ValueError, match=r"the Ray cluster's 2 CPUs, got workers=3 × threads=1"):
        ray_index.index_files(files, "c", path=tmp_path / "q", workers=3)
    with pytest.raises(ValueError, match=r"files must hold at least one"):
        ray_index.index_files([], "c", path=tmp_path / "q")
    with pytest.raises(ValueError, match=r"not both or neither \(got url=None, path=None\)"):
        ray_index.index_files(files, "c")
    with pytest.raises(TypeError, match=r"unknown option\(s\) \[.unknown_option.\]"):
        ray_index.index_files(files, "c", path=tmp_path / "q", options={"unknown_option": 1})
    with pytest.raises(ConnectionError, match=r"cannot reach Qdrant at 'http://127.0.0.1:9'"):
        ray_index.index_files(files, "c", url="http://127.0.0.1:9", timeout=2)
    with pytest.raises(SystemExit) as caught:  # bad usage: exit 2, before anything is read
        cli.main(["index", str(docs), "--workers", "2", "--path", str(tmp_path / "q")])
    assert caught.value.code == 2 and "--workers is an option of --engine ray" in capsys.readouterr().err
