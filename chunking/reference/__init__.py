"""Reference implementations: the plain version of every strategy, one standalone file each.

Each file imports nothing from `chunking` — only the standard library and, where needed, tiktoken,
markdown-it-py or numpy — so you can copy it into your own project as it is. Each fits on a screen
or two, exposes `chunk(text, chunk_size, ...)` and obeys the same contract as the engine: spans
are half-open character offsets, in order, nothing but whitespace lost, every chunk within
`chunk_size` tokens (cl100k_base) but a single code point too big alone. Its docstring says what it
simplifies compared with the engine module of the same name, and why the engine does more; the
tests hold each one to the contract and to the engine's spans on the bundled corpus. Standing alone
means some repeat a few helpers (a sentence splitter, token windows) on purpose.

| file | strategy |
|---|---|
| `fixed.py` | windows of tokens or characters |
| `sentence.py` | whole sentences packed (with a compact sentence splitter of its own) |
| `paragraph.py` | blank-line paragraphs packed |
| `markdown.py` | sections by heading, blocks packed, heading paths |
| `sliding.py` | sentence windows overlapping by a fraction |
| `recursive.py` | paragraphs → lines → sentences → words → windows |
| `semantic.py` | breakpoints where neighbouring sentences' embeddings differ (given an `embed` callable) |
| `parent_child.py` | parent spans, and child spans with their parent's index |
| `contextual.py` | spans with a heading context |
| `late.py` | one vector per span, pooled from token vectors and their offsets |
"""

# Each file calls `tiktoken.get_encoding("cl100k_base")`, which in a project of your own reads (and
# the first time downloads) tiktoken's BPE file. Inside this package, build it offline first, so the
# files work here with no network and in any order of imports.
from chunking.tokens import get_encoding as _offline_cl100k

_offline_cl100k()
