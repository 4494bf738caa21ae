"""Labelled questions: each with the reference spans that answer it, read from a JSON-lines file.

One line a question: `{"question": str, "references": [{"doc", "start", "end", "text"}, ...], "kind": str}`
(`kind` optional; see data/README.md). `load_questions` checks every line and names the file, the
line and the field of any problem; `verify_questions` checks each reference's text against its span
of the documents, and lists every one that does not match. The metrics that score retrieval against
them are `chunking.evaluate`'s.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chunking.load import read_text

Span = tuple[int, int]
LocatedSpan = tuple[str, int, int]
PREVIEW_CHARS = 40
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Reference:
    """A span that answers a question: `documents[doc][start:end] == text`."""

    doc: str
    start: int
    end: int
    text: str

    @property
    def span(self) -> LocatedSpan:
        """`(doc, start, end)`, as the metrics take it."""
        return (self.doc, self.start, self.end)


@dataclass(frozen=True)
class Question:
    """A question and the reference spans that answer it; `kind` is a free label ("number", "fact")."""

    question: str
    references: tuple[Reference, ...]
    kind: str = ""

    @property
    def spans(self) -> list[LocatedSpan]:
        """The references as located spans, ready for `span_metrics`."""
        return [r.span for r in self.references]


def load_questions(path: str | os.PathLike[str]) -> list[Question]:
    """Read questions from a JSON-lines file; blank lines are skipped, unknown fields ignored.

    Each line: `{"question": str, "references": [{"doc", "start", "end", "text"}, ...], "kind": str}`
    (`kind` optional). Raises `ValueError` naming the file and line (`q.jsonl:3: ...`) for bytes that
    are not UTF-8 (and the byte and its column), bad JSON, a missing or mistyped field, no references,
    or a span that is not `0 <= start < end`; and for a file with no questions at all.
    """
    questions = []
    for line_number, line in enumerate(_LINE_END.split(read_text(path)), 1):  # as text mode splits lines
        try:
            if not line.strip():
                continue
            questions.append(_parse_question(json.loads(line)))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{line_number}: not valid JSON ({error.msg}, column {error.colno})") from None
        except ValueError as error:
            raise ValueError(f"{path}:{line_number}: {error}") from None
    if not questions:
        raise ValueError(f"{path} holds no questions (one JSON object per line; see data/README.md)")
    return questions


def verify_questions(questions: Sequence[Question], documents: Mapping[str, str]) -> None:
    """Raise `ValueError` listing every reference whose doc is missing or whose text is not its span."""
    problems = []
    for i, question in enumerate(questions):
        for j, ref in enumerate(question.references):
            where = f"questions[{i}].references[{j}]"
            if ref.doc not in documents:
                problems.append(f"{where}: doc {ref.doc!r} is not in documents")
            elif ref.end > len(documents[ref.doc]):
                problems.append(f"{where}: span ({ref.start}, {ref.end}) ends past the end of {ref.doc} "
                                f"({len(documents[ref.doc])} characters)")
            elif (found := documents[ref.doc][ref.start : ref.end]) != ref.text:
                problems.append(
                    f"{where}: text {_preview(ref.text)} but {ref.doc}[{ref.start}:{ref.end}] "
                    f"is {_preview(found)}"
                )
    if problems:
        raise ValueError(f"{len(problems)} reference(s) do not match documents:\n" + "\n".join(problems))


def _parse_question(obj: object) -> Question:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    question = _field(obj, "question", str)
    if not question.strip():
        raise ValueError("'question' is empty")
    refs = _field(obj, "references", list)
    if not refs:
        raise ValueError("'references' is empty: a question needs at least one reference")
    kind = _field(obj, "kind", str) if "kind" in obj else ""
    return Question(
        question, tuple(_parse_reference(ref, f"references[{i}]") for i, ref in enumerate(refs)), kind
    )


def _parse_reference(obj: object, where: str) -> Reference:
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be a JSON object, got {obj!r}")
    doc, text = _field(obj, "doc", str, where), _field(obj, "text", str, where)
    start, end = _field(obj, "start", int, where), _field(obj, "end", int, where)
    if not 0 <= start < end:
        raise ValueError(f"{where} needs 0 <= start < end, got start={start}, end={end}")
    return Reference(doc, start, end, text)


def _field(obj: dict, name: str, kind: type, where: str = "") -> object:
    label = f"{where}.{name}" if where else name
    if name not in obj:
        raise ValueError(f"missing field {label!r}")
    value = obj[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"field {label!r} must be {kind.__name__}, got {value!r}")
    return value


def _preview(text: str) -> str:
    return repr(text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…")
