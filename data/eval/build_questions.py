"""Build questions.jsonl from the hand-written drafts: every excerpt becomes exact offsets.

1. Read every draft matching `--drafts` (default `questions_draft_*.jsonl` beside this script,
   sorted by name), one question a line: {"question", "references": [{"doc", "text"}], "kind"}.
2. Read each referenced document from the `--corpus` folder (default data/corpus) as a chunker
   sees it: `chunking.load.load_document` for the suffixes it reads (the raw text of .txt/.md, the
   extracted text of .html/.pdf), the raw UTF-8 text with newlines untouched for any other file
   (the source files of data/code, which load_document does not read yet).
3. Find each excerpt; it must occur exactly once in its document (overlapping matches count).
4. Write `--out` (default questions.jsonl), one question a line:
   {"question", "references": [{"doc", "start", "end", "text"}], "kind"}, text == doc.text[start:end].

The kinds allowed depend on the corpus: `KINDS` maps a corpus folder's name to its kinds. Every
problem (unknown document or kind, an excerpt missing or found twice, a repeated question) is
reported at once, and nothing is written unless there are none. The drafts are the source to edit.

    python data/eval/build_questions.py           # rebuild questions.jsonl
    python data/eval/build_questions.py --check   # exit 1 if questions.jsonl is out of date
    python data/eval/build_questions.py --corpus data/code \
        --drafts 'data/eval/code_questions_draft*.jsonl' --out data/eval/code_questions.jsonl
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path

from chunking.load import SUPPORTED, load_document, read_text

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "corpus"
DRAFTS = str(HERE / "questions_draft_*.jsonl")
OUTPUT = HERE / "questions.jsonl"
# The kinds of question each corpus folder may use (data/README.md says what each one tests).
KINDS = {
    "corpus": ("number", "heading", "paraphrase", "two_places", "fact", "boundary"),
    "code": ("definition", "signature", "constant", "scope", "behaviour", "two_places"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Turn the question drafts into questions.jsonl with offsets.")
    parser.add_argument("--check", action="store_true", help="only check that the output is current")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="folder of the documents (default data/corpus)")
    parser.add_argument("--drafts", default=DRAFTS, help="glob of the draft files (default questions_draft_*.jsonl)")
    parser.add_argument("--out", type=Path, default=OUTPUT, help="questions file to write (default questions.jsonl)")
    args = parser.parse_args(argv)
    drafts = sorted(Path(p) for p in glob.glob(args.drafts))
    try:
        if not drafts:
            raise ValueError(f"no draft file matches {args.drafts!r}")
        text = to_jsonl(build(drafts, args.corpus))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    output = args.out
    if args.check:
        current = output.read_text(encoding="utf-8") if output.exists() else ""
        print(f"{output.name} is {'up to date' if current == text else 'out of date: run without --check'}")
        return 0 if current == text else 1
    output.write_text(text, encoding="utf-8")
    print(f"wrote {text.count(chr(10))} questions to {output}")
    return 0


def build(drafts: list[Path], corpus: Path) -> list[dict]:
    """Questions with offsets from the draft files; ValueError listing every problem found.
    The kinds allowed are `KINDS[corpus.name]`."""
    corpus = Path(corpus)
    if corpus.name not in KINDS:
        raise ValueError(f"corpus {str(corpus)!r} has no kinds: its folder name must be one of {sorted(KINDS)}")
    kinds = KINDS[corpus.name]
    documents: dict[str, str] = {}
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
            if row["kind"] not in kinds:
                problems.append(f"{where}: kind {row['kind']!r} is not one of {kinds}")
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


def document_text(path: Path) -> str:
    """The text the offsets refer to: `load_document`'s for the suffixes it reads, else the raw
    UTF-8 text with newlines untouched (as `open(path, encoding="utf-8", newline="")` reads it)."""
    return load_document(path).text if path.suffix.lower() in SUPPORTED else read_text(path)


def _locate(ref: dict, corpus: Path, documents: dict[str, str], where: str, problems: list[str]) -> dict:
    """The reference with its offsets; one that cannot be located is noted in `problems`."""
    name, excerpt = ref["doc"], ref["text"]
    if name not in documents:
        if not (corpus / name).is_file():
            problems.append(f"{where}: document {name!r} is not in {corpus}")
            return {"doc": name, "start": -1, "end": -1, "text": excerpt}
        documents[name] = document_text(corpus / name)
    text = documents[name]
    start = text.find(excerpt) if excerpt else -1
    if start < 0:
        problems.append(f"{where}: excerpt not found in {name}: {excerpt[:60]!r}")
    elif (again := text.find(excerpt, start + 1)) >= 0:
        problems.append(f"{where}: excerpt found twice in {name} (at {start} and {again}): {excerpt[:60]!r}")
    return {"doc": name, "start": start, "end": start + len(excerpt), "text": excerpt}


if __name__ == "__main__":
    sys.exit(main())
