"""The playground: pick a strategy and a document, drag the size and overlap, watch the boundaries move.

1. `run(text, strategy, chunk_size=, chunk_overlap=, unit=)` chunks with `chunking.chunk` and returns a
   `Result`: each chunk's exact span, its size in the unit and its cl100k token count — or, for an
   invalid option, the library's own error message (it names the parameter and the value), never a
   traceback.
2. `render(...)` is that result as HTML: a summary line ("N chunks, mean T tokens, max M"), the text
   coloured by `display.show_chunks` (a grey number where each chunk starts, overlaps in red) and a
   table of spans, sizes and tokens. Everything a test needs is in `run`; `render` only draws it.
3. `playground(documents=None)` puts ipywidgets around `render`: a strategy, a document (the bundled
   corpus, or text pasted in), sliders for size and overlap, the unit, and the HTML output.
The structural strategies only (`STRUCTURAL`): no model, no network. semantic and late need an embedder;
parent_child and contextual add parents and contexts beside the boundaries, which this view does not
draw. ChunkViz's idea, with exact offsets. ipywidgets (the `notebooks` extra) is imported only inside
`playground()`, so `run` and `render` work without it. Notebook: notebooks/playground.ipynb.
"""

from __future__ import annotations

import html
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chunking.display import PALETTE, show_chunks
from chunking.registry import STRATEGIES, chunk, takes
from chunking.sizers import resolve_unit

STRUCTURAL = ("fixed", "sentence", "paragraph", "markdown", "sliding", "recursive")
UNITS = {s: ("tokens", "characters", "sentences") if s in ("sentence", "sliding") else ("tokens", "characters")
         for s in STRUCTURAL}
# Slider range (min, max, step) and default size in each unit.
SIZES = {"tokens": (10, 1000, 10, 200), "characters": (50, 4000, 50, 800), "sentences": (1, 20, 1, 5)}
NOTES = {"sliding": "sliding: with overlap 0 each window repeats about a quarter of its sentences "
                    "(overlap_fraction=0.25); an overlap carries that much of the previous window instead."}
PASTE = "paste your own"
WIDE = {"description_width": "initial"}
SAMPLE = ("# Paste your own text\n\nType or paste a document here. The chunks update as you type.\n\n"
          "## A second section\n\nShort sentences help. So do blank lines between paragraphs.\n")


@dataclass(frozen=True)
class Span:
    """One chunk as the playground shows it: `text[start:end]`, its size in the unit, its tokens."""

    index: int
    start: int
    end: int
    size: int
    tokens: int


@dataclass(frozen=True)
class Result:
    """What `run` found: the chunks' spans, or the library's error message (`error`) and no spans."""

    text: str
    strategy: str
    chunk_size: Any
    unit: str
    spans: tuple[Span, ...] = ()
    error: str = ""

    @property
    def summary(self) -> str:
        """One line: how many chunks, their mean and largest token counts, and sizes in the unit."""
        if self.error:
            return self.error
        if not self.spans:
            return "0 chunks (the text is empty)"
        tokens = [s.tokens for s in self.spans]
        line = (f"{len(tokens)} chunk{'s' if len(tokens) > 1 else ''}, mean {statistics.fmean(tokens):.1f} tokens, "
                f"max {max(tokens)}")
        if self.unit != "tokens":
            sizes = [s.size for s in self.spans]
            line += f"; {self.unit}: mean {statistics.fmean(sizes):.1f}, max {max(sizes)}"
        return f"{line} (chunk_size {self.chunk_size} {self.unit})"


def run(text: str, strategy: str = "recursive", chunk_size: Any = 200, chunk_overlap: Any = 0,
        unit: str = "tokens") -> Result:
    """Chunk `text` as `chunking.chunk(text, strategy, ...)` does, and measure every chunk.

    >>> result = run("One. Two. Three.", "sentence", chunk_size=2, unit="sentences")
    >>> [(s.start, s.end, s.size, s.tokens) for s in result.spans]
    [(0, 9, 2, 4), (10, 16, 1, 2)]
    >>> result.summary
    '2 chunks, mean 3.0 tokens, max 4; sentences: mean 1.5, max 2 (chunk_size 2 sentences)'
    >>> run("One.", "fixed", chunk_size=10, chunk_overlap=10).summary
    'ValueError: chunk_overlap must be >= 0 and < chunk_size=10, got 10'
    """
    result = Result(text=text, strategy=strategy, chunk_size=chunk_size, unit=unit)
    options = {"chunk_size": chunk_size, "unit": unit}
    if strategy in STRUCTURAL and takes(strategy, "chunk_overlap"):
        options["chunk_overlap"] = chunk_overlap
    try:
        if strategy in STRATEGIES and strategy not in STRUCTURAL:  # known but needs a model; unknown: the registry says
            raise ValueError(f"strategy must be one of {list(STRUCTURAL)} in the playground (no model), "
                             f"got {strategy!r}")
        chunks = chunk(text, strategy, **options)
    except (ValueError, TypeError) as error:  # the library's option checks: shown, not raised
        return _failed(result, error)
    sizer = resolve_unit(unit, sentences=True)  # in tokens the size is the token count: counted once, on the chunk
    spans = tuple(Span(c.index, c.start, c.end, c.token_count if unit == "tokens" else sizer.size(c.text),
                       c.token_count) for c in chunks)
    return Result(text=text, strategy=strategy, chunk_size=chunk_size, unit=unit, spans=spans)


def render(text: str, strategy: str = "recursive", chunk_size: Any = 200, chunk_overlap: Any = 0,
           unit: str = "tokens") -> str:
    """The HTML of `run(...)`: the summary line, the coloured text, the table of spans.

    >>> page = render("abcdefghij", "fixed", chunk_size=4, chunk_overlap=1, unit="characters")
    >>> page.count('<tr class="chunk"'), '3 chunks' in page
    (3, True)
    """
    return to_html(run(text, strategy, chunk_size, chunk_overlap, unit))


def to_html(result: Result) -> str:
    """A `Result` drawn: summary (or error) line, the text with its boundaries, the table."""
    if result.error:
        return f'<div class="chunking-playground"><p class="error" style="color:#b91c1c">' \
               f'{html.escape(result.error)}</p></div>'
    note = NOTES.get(result.strategy, "")
    chunks = [_Chunk(s.index, s.start, s.end) for s in result.spans]
    view = show_chunks(result.text, chunks)._repr_html_()
    rows = "".join(_row(result, s) for s in result.spans)
    head = "<tr><th>chunk</th><th>start</th><th>end</th>" \
           f"<th>size ({html.escape(result.unit)})</th><th>tokens</th><th>begins</th></tr>"
    box = "max-height:24em;overflow:auto;border:1px solid #e5e7eb;padding:4px;margin:4px 0"
    return (f'<div class="chunking-playground"><p class="summary"><b>{html.escape(result.summary)}</b></p>'
            + (f'<p class="note" style="color:#6b7280">{html.escape(note)}</p>' if note else "")
            + f'<div class="view" style="{box}">{view}</div>'
            + f'<div style="{box}"><table class="spans" style="font-size:12px">{head}{rows}</table></div></div>')


def playground(documents: Mapping[str, str] | Sequence | None = None) -> Playground:
    """The widget: strategy, document, size, overlap and unit controls above the rendered chunks.

    `documents` maps a name to a text (or is a list of `chunking.Document`s); by default the bundled
    corpus (`chunking.datasets.corpus_dir()`). "paste your own" is always there, with a text box.
    Display the returned `Playground` (the last line of a cell); its controls are its fields.
    """
    widgets = _ipywidgets()
    texts = _documents(documents)
    size_min, size_max, step, size = SIZES["tokens"]
    view = Playground(
        strategy=widgets.Dropdown(options=STRUCTURAL, value="recursive", description="strategy"),
        document=widgets.Dropdown(options=[*texts, PASTE], description="document"),
        pasted=widgets.Textarea(value=SAMPLE, rows=8, layout=widgets.Layout(width="95%", display="none")),
        size=widgets.IntSlider(value=size, min=size_min, max=size_max, step=step, description="chunk_size", style=WIDE),
        overlap=widgets.IntSlider(value=0, min=0, max=size_max, step=step, description="chunk_overlap", style=WIDE),
        unit=widgets.ToggleButtons(options=UNITS["recursive"], value="tokens", description="unit"),
        output=widgets.HTML(), texts=texts,
    )
    view.box = widgets.VBox([widgets.HBox([view.strategy, view.document]), view.pasted,
                             widgets.HBox([view.size, view.overlap]), view.unit, view.output])
    for control in (view.strategy, view.unit):
        control.observe(view.retune, names="value")
    for control in (view.document, view.pasted, view.size, view.overlap):
        control.observe(view.update, names="value")
    view.update()
    return view


@dataclass(eq=False)
class Playground:
    """The widgets of `playground()`; `box` is what is displayed, `update` redraws `output`."""

    strategy: Any
    document: Any
    pasted: Any
    size: Any
    overlap: Any
    unit: Any
    output: Any
    texts: Mapping[str, str]
    box: Any = None
    paused: bool = False

    def text(self) -> str:
        """The text being chunked: the chosen document, or what was pasted."""
        return self.pasted.value if self.document.value == PASTE else self.texts[self.document.value]

    def update(self, _change: object = None) -> None:
        """Redraw the output from the controls' values (an invalid combination shows its error)."""
        if self.paused:
            return
        self.pasted.layout.display = "" if self.document.value == PASTE else "none"
        self.output.value = render(self.text(), self.strategy.value, self.size.value, self.overlap.value,
                                   self.unit.value)

    def retune(self, _change: object = None) -> None:
        """After a strategy or unit change: the units the strategy takes, the sliders' ranges in the
        unit, overlap disabled where the strategy has none; then one redraw."""
        if self.paused:
            return
        self.paused = True  # the changes below would each redraw, and a unit change would come back here
        try:
            unit, units = self.unit.value, UNITS[self.strategy.value]
            if self.unit.options != units:
                self.unit.options = units
                self.unit.value = unit if unit in units else units[0]
            low, high, step, default = SIZES[self.unit.value]
            if (self.size.min, self.size.max) != (low, high):
                _set_range(self.size, low, high, step, default)
                _set_range(self.overlap, 0, high, step, 0)
            self.overlap.disabled = not takes(self.strategy.value, "chunk_overlap")
        finally:
            self.paused = False
        self.update()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.box._repr_mimebundle_(**kwargs)


@dataclass(frozen=True)
class _Chunk:  # what show_chunks reads of a chunk
    index: int
    start: int
    end: int


def _set_range(slider: Any, low: int, high: int, step: int, value: int) -> None:
    """Move an IntSlider to a new range: widened first, so its value is never clamped on the way."""
    slider.min, slider.max = min(slider.min, low), max(slider.max, high)
    slider.value, slider.step = value, step
    slider.min, slider.max = low, high


def _failed(result: Result, error: Exception) -> Result:
    return Result(text=result.text, strategy=result.strategy, chunk_size=result.chunk_size, unit=result.unit,
                  error=f"{type(error).__name__}: {error}")


def _row(result: Result, span: Span) -> str:
    colour = PALETTE[span.index % len(PALETTE)]
    begins = html.escape(result.text[span.start:span.end][:40].replace("\n", " "))
    return (f'<tr class="chunk" data-start="{span.start}" data-end="{span.end}" data-size="{span.size}" '
            f'data-tokens="{span.tokens}"><td style="background:{colour}">{span.index}</td><td>{span.start}</td>'
            f"<td>{span.end}</td><td>{span.size}</td><td>{span.tokens}</td><td><code>{begins}</code></td></tr>")


def _documents(documents: Mapping[str, str] | Sequence | None) -> dict[str, str]:
    """Name -> text: the given mapping, the given Documents by title, or the bundled corpus."""
    if isinstance(documents, Mapping):
        return {str(name): text for name, text in documents.items()}
    if documents is None:
        from chunking.datasets import corpus_dir
        from chunking.load import load_corpus

        try:
            documents = load_corpus(corpus_dir())
        except FileNotFoundError:  # a wheel without the data: pasted text only
            return {}
    return {d.doc_id: d.text for d in documents}


def _ipywidgets():
    try:
        import ipywidgets
    except ImportError as error:
        raise ImportError("the playground needs ipywidgets: pip install -e '.[notebooks]' (or make setup)") \
            from error
    return ipywidgets
