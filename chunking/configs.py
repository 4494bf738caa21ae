"""What `chunking evaluate` compares: configurations from --strategies or a JSON/YAML --config file.

1. `configs(args)`: a --config file's entries, else --strategies at the sizes given, else the standard set
   (`chunking.compare.DEFAULT_CONFIGS`).
2. Every entry of a file is checked in full (`chunking.compare.Config.check`) before any runs; each
   problem names the file, the line where its entry starts and the entry, and all are reported at once.
3. `flag_options(args, strategy)`: a strategy's options as the flags give them; a flag the strategy has
   no use for is a ValueError naming it.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from chunking.registry import STRATEGIES, takes

JSON_GAP = re.compile(r"[ \t\n\r]*,?[ \t\n\r]*")  # between two elements of a JSON list


def configs(args: argparse.Namespace) -> list:
    """The configurations to compare: a --config file's, --strategies at the sizes given, or the defaults."""
    from chunking.compare import DEFAULT_CONFIGS

    if args.config:
        return file_configs(args.config)
    if args.strategies is not None:
        return strategy_configs(args)
    return list(DEFAULT_CONFIGS)


def strategy_configs(args: argparse.Namespace) -> list:
    """--strategies at --chunk-size and --chunk-overlap, each checked in full; errors name the flags."""
    from chunking.compare import Config

    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [n for n in names if n not in STRATEGIES]
    if not names or unknown:
        raise ValueError(f"--strategies must name strategies from {sorted(STRATEGIES)}, got "
                         f"{unknown or repr(args.strategies)}")
    if twice := sorted({n for n in names if names.count(n) > 1}):
        raise ValueError(f"--strategies names {twice} more than once")
    found = [Config(f"{n}-{args.chunk_size}", n, flag_options(args, n),  # parent_child retrieves parents only
                    retrieval="parents" if n == "parent_child" else "dense") for n in names]
    for each in found:
        each.check(where=f"--strategies {each.strategy}")
    return found


def file_configs(path: Path) -> list:
    """A --config file's configurations, every entry checked in full before any runs: each problem names
    the file, the line where its entry starts and the entry (index and name); all are reported at once."""
    found, problems, named = [], [], []  # named: (name, line) of every entry that has a name
    for i, (line, entry) in enumerate(read_config(path)):
        name = entry.get("name") if isinstance(entry, dict) else None
        named += [(name, line)] if isinstance(name, str) else []
        where = f"{path}:{line}: entry {i}" + (f" ({name!r})" if isinstance(name, str) else "")
        try:
            found.append(config(entry, where))
        except (TypeError, ValueError) as error:
            problems.append(str(error))
    names = [name for name, _ in named]
    for name in sorted({n for n in names if names.count(n) > 1}):
        at = " and ".join(f"line {line}" for other, line in named if other == name)
        problems.append(f"{path}: configuration names must be distinct, got [{name!r}] more than once (at {at})")
    if problems:
        raise ValueError(problems[0] if len(problems) == 1 else f"{len(problems)} problems: " + "; ".join(problems))
    return found


def config(entry: object, where: str):
    """One configuration from a config file's entry (name, strategy, and optionally options, embedding,
    retrieval), checked in full (`Config.check`); errors begin with `where`."""
    from chunking.compare import Config

    keys = ("name", "strategy", "options", "embedding", "retrieval")
    if not isinstance(entry, dict) or not {"name", "strategy"} <= entry.keys():
        raise ValueError(f"{where}: must be an object with 'name' and 'strategy' (and optionally 'options', "
                         f"'embedding', 'retrieval'), got {entry!r:.80}")
    if unknown := sorted(set(entry) - set(keys)):
        raise ValueError(f"{where}: unknown key(s) {unknown}; the keys are {list(keys)}")
    if not isinstance(entry.get("options", {}), dict):
        raise ValueError(f"{where}: options must be an object, got {entry['options']!r:.60}")
    made = Config(**{key: entry[key] for key in keys if key in entry})
    made.check(where=where)
    return made


def read_config(path: Path) -> list[tuple[int, object]]:
    """A JSON (or YAML) list of configurations, each with the line where it starts; a syntax or
    decoding error names the file and the line."""
    from chunking.load import read_text

    raw = read_text(path)
    entries = yaml_entries(raw, path) if path.suffix.lower() in (".yml", ".yaml") else json_entries(raw, path)
    if not entries:
        raise ValueError(f"{str(path)!r} must hold a non-empty list of {{'name', 'strategy', 'options'}} objects")
    return entries


def json_entries(raw: str, path: Path) -> list[tuple[int, object]]:
    """The elements of a JSON list, each with its first line (found by decoding them one by one)."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"{str(path)!r} is not valid JSON at line {error.lineno}, column {error.colno}: "
                         f"{error.msg}") from None
    if not isinstance(data, list):
        return []
    decoder, entries, at = json.JSONDecoder(), [], raw.index("[") + 1
    for _ in data:  # the document is valid: each element follows whitespace and, after the first, a comma
        start = JSON_GAP.match(raw, at).end()
        entry, at = decoder.raw_decode(raw, start)
        entries.append((raw.count("\n", 0, start) + 1, entry))  # lines as JSONDecodeError counts them
    return entries


def yaml_entries(raw: str, path: Path) -> list[tuple[int, object]]:
    """The items of a YAML list, each with its first line (from the composed node's mark)."""
    import yaml

    loader = yaml.SafeLoader(raw)  # safe: no tags that build Python objects
    try:
        node = loader.get_single_node()
        data = None if node is None else loader.construct_document(node)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or error
        raise ValueError(f"{str(path)!r} is not valid YAML{where}: {problem}") from None
    finally:
        loader.dispose()
    if not isinstance(data, list):
        return []
    return [(item.start_mark.line + 1, entry) for item, entry in zip(node.value, data)]


def flag_options(args: argparse.Namespace, strategy: str) -> dict:
    """The strategy's options as the flags give them (`--unit pieces` as "pieces"). A flag of no use to
    the strategy is a ValueError."""
    options = {"chunk_size": args.chunk_size, "chunk_overlap": args.chunk_overlap}
    if getattr(args, "unit", "tokens") != "tokens":  # evaluate's collection names hash these options
        options["unit"] = args.unit
    if getattr(args, "min_chunk_size", None) is not None:
        if not takes(strategy, "min_chunk_size"):
            which = sorted(s for s in STRATEGIES if takes(s, "min_chunk_size"))
            raise ValueError(f"--min-chunk-size is an option of {', '.join(which)}, not of {strategy}")
        options["min_chunk_size"] = args.min_chunk_size
    return options
