"""Build questions.jsonl from the hand-written drafts: every excerpt becomes exact offsets.

1. Read every `questions_draft_*.jsonl` beside this script (sorted by name), one question a line:
   {"question", "references": [{"doc", "text"}], "kind"}.
2. Load each referenced document from data/corpus with `chunking.load.load_document`, so the
   offsets refer to the text a chunker sees: the raw text of .txt/.md, the extracted text of .html/.pdf.
3. Find each excerpt; it must occur exactly once in its document (overlapping matches count).
4. Write questions.jsonl, one question a line:
   {"question", "references": [{"doc", "start", "end", "text"}], "kind"}, text == doc.text[start:end].

Every problem (unknown document or kind, an excerpt missing or found twice, a repeated question) is
reported at once, and nothing is written unless there are none. The drafts are the source to edit.

    python data/eval/build_questions.py           # rebuild questions.jsonl
    python data/eval/build_questions.py --check   # exit 1 if questions.jsonl is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chunking.load import Document, load_document

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "corpus"
OUTPUT = HERE / "questions.jsonl"
KINDS = ("number", "heading", "paraphrase", "two_places", "fact", "boundary")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Turn the question drafts into questions.jsonl with offsets.")
    parser.add_argument("--check", action="store_true", help="only check that questions.jsonl is current")
    args = parser.parse_args(argv)
    try:
        text = to_jsonl(build(sorted(HERE.glob("questions_draft_*.jsonl")), CORPUS))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        print(f"{OUTPUT.name} is {'up to date' if current == text else 'out of date: run without --check'}")
        return 0 if current == text else 1
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {text.count(chr(10))} questions to {OUTPUT}")
    return 0


def build(drafts: list[Path], corpus: Path) -> list[dict]:
    """Questions with offsets from the draft files; ValueError listing every problem found."""
    documents: dict[str, Document] = {}
    questions, problems, seen = [], [], {}
    for draft in drafts:
        for number, line in enumerate(draft.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{draft.name}:{number}"
            try:
                row = _parse(line)
            except ValueError as error:
                problems.append(f"{where}: {error}")
                continue
            key = " ".join(row["question"].casefold().split())
            if key in seen:
                problems.append(f"{where}: question repeats {seen[key]}: {row['question']!r}")
            seen[key] = where
            if row["kind"] not in KINDS:
                problems.append(f"{where}: kind {row['kind']!r} is not one of {KINDS}")
            references = [_locate(ref, corpus, documents, where, problems) for ref in row["references"]]
            questions.append({"question": row["question"], "references": references, "kind": row["kind"]})
    if problems:
        raise ValueError(f"{len(problems)} problem(s) in the drafts:\n" + "\n".join(problems))
    return questions


def to_jsonl(questions: list[dict]) -> str:
    return "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)


def _parse(line: str) -> dict:
    """One draft line as a dict, or a ValueError saying what is wrong with its shape."""
    row = json.loads(line)  # a JSONDecodeError is a ValueError
    if not isinstance(row, dict) or not {"question", "references", "kind"} <= set(row):
        raise ValueError(f"expected an object with question, references and kind, got {line[:60]!r}")
    refs = row["references"]
    if not refs or not all(isinstance(r, dict) and {"doc", "text"} <= set(r) for r in refs):
        raise ValueError(f"references must be a non-empty list of {{doc, text}} objects, got {refs!r:.60}")
    return row


def _locate(ref: dict, corpus: Path, documents: dict[str, Document], where: str, problems: list[str]) -> dict:
    """The reference with its offsets; one that cannot be located is noted in `problems`."""
    name, excerpt = ref["doc"], ref["text"]
    if name not in documents:
        if not (corpus / name).is_file():
            problems.append(f"{where}: document {name!r} is not in {corpus}")
            return {"doc": name, "start": -1, "end": -1, "text": excerpt}
        documents[name] = load_document(corpus / name)
    text = documents[name].text
    start = text.find(excerpt) if excerpt else -1
    if start < 0:
        problems.append(f"{where}: excerpt not found in {name}: {excerpt[:60]!r}")
    elif (again := text.find(excerpt, start + 1)) >= 0:
        problems.append(f"{where}: excerpt found twice in {name} (at {start} and {again}): {excerpt[:60]!r}")
    return {"doc": name, "start": start, "end": start + len(excerpt), "text": excerpt}


if __name__ == "__main__":
    sys.exit(main())
