"""Parent-child chunking: search small children, hand the LLM their big parents.

1. Parents, each at most `parent_size` (`parent_mode`): whole markdown sections packed together
   ("sections"; one too big is split at its blocks), fixed windows in the unit ("windows"), or
   sentences grouped while neighbours stay within the relaxed `parent_threshold` distance
   (1 - cosine; "semantic", with an `embedder`).
2. Children: inside each parent (and each section), sentences packed up to `chunk_size`; semantic
   parents also split children where the distance passes the stricter `child_threshold`. A child
   records its parent's span, index and id (the parent chunk's uuid5).
3. Only children are embedded; `chunking.retrieval` stores them and hands back parents ("payload"
   copies the parent text into every child's payload, "lookup" fetches it by id from a vectorless
   collection).
Small children embed precisely; big parents give the LLM context, and cost it more tokens.
It does not overlap parents, pick a parent per child independently, nest deeper than two levels, or
rerank. Taught in notebook 08.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chunking import blocks
from chunking.models import EmbeddingModel, check_embedder, distances
from chunking.options import check_number, check_text, resolve_sizes
from chunking.packing import fallback, pack
from chunking.segment import split_sentences
from chunking.sizers import Bound, Unit, resolve_unit
from chunking.types import Chunk, Span, make_chunks, shift
from chunking.windows import windows

STRATEGY = "parent_child"
PARENT_STRATEGY = "parent_child:parent"
PARENT_MODES = ("sections", "semantic", "windows")
MAX_DISTANCE = 2.0  # 1 - cosine lies in [0, 2]
# Default thresholds suit all-MiniLM-L6-v2, whose neighbouring sentences in data/corpus are 0.75 apart at
# the median: 0.9 splits about one boundary in six into parents, 0.75 about one in two into children.

Run = tuple[list[Span], tuple[str, ...] | None]  # sentences children are packed from; heading path, if known


def chunk(
    text: str,
    *,
    chunk_size: int = 200,
    chunk_overlap: int | float = 0,
    unit: Unit = "tokens",
    parent_size: int = 800,
    parent_mode: str = "sections",
    parent_threshold: float = 0.9,
    child_threshold: float = 0.75,
    embedder: EmbeddingModel | None = None,
    doc_id: str = "",
) -> list[Chunk]:
    """The children (`chunk_size` at most), each pointing at its parent (`parent_size` at most).

    >>> doc = "# A\\n\\nOne. Two.\\n\\n# B\\n\\nThree."
    >>> children = chunk(doc, chunk_size=4, parent_size=8)
    >>> [(c.text, c.metadata["heading_path"], c.metadata["parent_index"]) for c in children]
    [('# A', ('A',), 0), ('One. Two.', ('A',), 0), ('# B', ('B',), 1), ('Three.', ('B',), 1)]
    >>> [p.text for p in parents(doc, children)]
    ['# A\\n\\nOne. Two.', '# B\\n\\nThree.']
    """
    text = check_text(text)
    size, overlap = resolve_sizes(chunk_size, chunk_overlap)
    sizer = resolve_unit(unit)
    bound = sizer.bind(text)
    _check_options(size, parent_size, parent_mode, parent_threshold, child_threshold)
    if parent_mode == "sections":
        planned = _section_parents(text, bound, parent_size)
    elif parent_mode == "windows":
        planned = [(span, [(_sentences(text, span), None)]) for span in windows(bound, 0, len(text), parent_size)]
    else:
        check_embedder(embedder)  # semantic parents need one; `chunking.chunk` passes the bundled MiniLM
        planned = _semantic_parents(text, bound, parent_size, parent_threshold, child_threshold, embedder)
    parent_chunks = make_chunks(text, [span for span, _ in planned], strategy=PARENT_STRATEGY, doc_id=doc_id)
    split = fallback(bound, size, overlap, ("words",))
    spans, metadata = [], []
    for parent, (_, runs) in zip(parent_chunks, planned):
        for pieces, path in runs:
            for span in pack(pieces, bound, size, overlap, split):
                spans.append(span)
                metadata.append({"parent_start": parent.start, "parent_end": parent.end, "parent_id": parent.id,
                                 "parent_index": parent.index, **({} if path is None else {"heading_path": path})})
    context = [blocks.PATH_SEPARATOR.join(m.get("heading_path", ())) for m in metadata]
    return make_chunks(text, spans, strategy=STRATEGY, doc_id=doc_id, metadata=metadata, context=context)


def parents(text: str, children: Sequence[Chunk]) -> list[Chunk]:
    """The distinct parents of `children` (from one document), rebuilt from their metadata, in order."""
    found: dict[tuple[int, int], int] = {}
    for i, c in enumerate(children):
        if not {"parent_start", "parent_end", "parent_index"} <= c.metadata.keys():
            raise ValueError(f"children[{i}] has no parent span in its metadata: was it made by parent_child.chunk?")
        if c.doc_id != children[0].doc_id:
            raise ValueError(f"children must come from one document, got {children[0].doc_id!r} and {c.doc_id!r}")
        found.setdefault((c.metadata["parent_start"], c.metadata["parent_end"]), c.metadata["parent_index"])
    doc_id = children[0].doc_id if children else ""
    return [Chunk(text=text[s:e], start=s, end=e, index=i, strategy=PARENT_STRATEGY, doc_id=doc_id)
            for (s, e), i in found.items()]


# --- the steps ------------------------------------------------------------------------------------


def _section_parents(text: str, bound: Bound, size: int) -> list[tuple[Span, list[Run]]]:
    """Whole sections packed into parents; a section too big for one is cut at its blocks."""
    sections = [(span, section.path) for section in blocks.sections(text)
                for span in blocks.pack_section(section, bound, size)]
    planned, i = [], 0
    for start, end in pack([span for span, _ in sections], bound, size, 0, lambda p: [p]):
        runs = []
        while i < len(sections) and sections[i][0][1] <= end:  # every section fits: pack never splits one
            runs.append((_sentences(text, sections[i][0]), sections[i][1]))
            i += 1
        planned.append(((start, end), runs))
    return planned


def _semantic_parents(
    text: str, bound: Bound, size: int, parent_threshold: float, child_threshold: float, embedder
) -> list[tuple[Span, list[Run]]]:
    """Sentences grouped at the relaxed threshold, capped at `size`; children groups at the strict one."""
    sentences, distance = distances(text, embedder=embedder)  # each sentence embedded once
    split = fallback(bound, size, 0, ("words",))
    planned = []
    for group in _groups(range(len(sentences)), distance, parent_threshold):
        j = 0  # the group's first sentence not yet placed in a parent
        for start, end in pack([sentences[i] for i in group], bound, size, 0, split):
            inside = []
            while j < len(group) and sentences[group[j]][1] <= end:
                if sentences[group[j]][0] >= start:  # else: an oversize sentence, cut across parents
                    inside.append(group[j])
                j += 1
            runs = [([sentences[i] for i in g], None) for g in _groups(inside, distance, child_threshold)]
            planned.append(((start, end), runs or [([(start, end)], None)]))  # no whole sentence: part of one
    return planned


def _groups(indices, distance: np.ndarray, threshold: float) -> list[list[int]]:
    """Consecutive sentence indices, split where the distance to the previous one exceeds `threshold`."""
    groups: list[list[int]] = []
    for i in indices:
        if groups and groups[-1][-1] == i - 1 and distance[i - 1] <= threshold:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _sentences(text: str, span: Span) -> list[Span]:
    return shift(split_sentences(text[span[0] : span[1]]), span[0])


def _check_options(size: int, parent_size: object, parent_mode: object, parent_threshold: object,
                   child_threshold: object) -> None:
    if isinstance(parent_size, bool) or not isinstance(parent_size, int):
        raise TypeError(f"parent_size must be an int, got {parent_size!r}")
    if parent_size < size:
        raise ValueError(f"parent_size must be >= chunk_size={size}, got {parent_size!r}")
    if parent_mode not in PARENT_MODES:
        raise ValueError(f"parent_mode must be one of {PARENT_MODES}, got {parent_mode!r}")
    check_number("parent_threshold", parent_threshold, 0, MAX_DISTANCE)  # distances, 1 - cosine
    check_number("child_threshold", child_threshold, 0, MAX_DISTANCE)
    if child_threshold > parent_threshold:
        raise ValueError(
            f"child_threshold must be <= parent_threshold={parent_threshold} (children split at the stricter, "
            f"smaller distance), got {child_threshold!r}"
        )
