"""Griffe extension: show the docstrings' doctests as Python console code in the API reference.

The package's docstrings are Markdown with bare doctests (`>>>` lines and their expected output,
run by `pytest --doctest-modules`). Rendered as Markdown, `>>>` would open three nested block
quotes; this wraps each doctest block (from its first `>>>` line to the next blank line) in a
`pycon` fence, before mkdocstrings parses the docstring. Text already inside a fence is left alone.
"""

from __future__ import annotations

import griffe


class DoctestFences(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        # The top-level package gets this event rather than on_object.
        self.on_object(obj=pkg)


def fence_doctests(text: str) -> str:
    out: list[str] = []
    in_fence = in_doctest = False
    indent = ""
    for line in text.split("\n"):
        stripped = line.lstrip()
        if in_doctest and not stripped:
            out.append(indent + "```")
            in_doctest = False
        elif not in_doctest and not in_fence and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            if out and out[-1].strip():
                out.append("")
            out.append(indent + "```pycon")
            in_doctest = True
        elif not in_doctest and stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        out.append(line)
    if in_doctest:
        out.append(indent + "```")
    return "\n".join(out)
