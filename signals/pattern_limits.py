"""What a signal's pattern may ask of the regex compiler, checked before anything compiles.

The `regex` module unrolls counted repeats when it compiles: the 19 characters
`(?:a{99999}){99999}` asked for 23 GB and were OOM-killed, on every start, as the signal was
replayed (#22). A pattern is therefore parsed first, by the `regex` module's own parser
(it builds a small tree and never unrolls; well under a millisecond for any 256
characters), and refused before compiling when

- its counted repeats multiply to more than MAX_REPEAT_PRODUCT along their nesting: each
  repeat counts as the largest number written in it (`{5}` and `{2,5}` 5, `{5,}` 5, `*`,
  `+` and `?` 1), so `(?:a{10}){100}` is 1,000 and `(?:a{99999}){99999}` about 10**10;
- groups and repeats nest deeper than MAX_NESTING.

The module's own parser, not Python's `re` one, so that nothing it reads otherwise (its
nested sets, `(?V1)`, verbose counts like `{9 9 9}`) slips past the check.
"""

from __future__ import annotations

import importlib
from typing import Any

MAX_REPEAT_PRODUCT = 1000
MAX_NESTING = 16
_MAX_NODES = 4096  # a parse tree of 256 characters has far fewer
_FLAG_ROUNDS = 8  # inline global flags: each round of parsing may learn more of them

# The parser is the module's private part; anything unexpected in it refuses the pattern.
_core: Any = importlib.import_module("regex._regex_core")


def check_pattern(pattern: str) -> None:
    """Raise ValueError saying why `pattern` may not be compiled (parsing only)."""
    shown = repr(pattern[:100])
    try:
        tree = _parse(pattern)
    except _core.error as exc:
        raise ValueError(f"{shown} is not a valid regular expression ({exc})") from None
    except RecursionError:
        raise ValueError(f"{shown} nests too deeply to be read") from None
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        # the private parser changed under us: refuse the pattern, in one line
        raise ValueError(f"{shown} could not be read before compiling "
                         f"({type(exc).__name__}: {exc})") from None
    product, depth = _measure(tree, shown)
    if product > MAX_REPEAT_PRODUCT:
        raise ValueError(f"{shown} repeats {product} times (counted repeats, multiplied "
                         f"where nested), more than {MAX_REPEAT_PRODUCT}; refused before "
                         "compiling")
    if depth > MAX_NESTING:
        raise ValueError(f"{shown} nests groups and repeats {depth} deep, more than "
                         f"{MAX_NESTING}; refused before compiling")


def _parse(pattern: str) -> Any:
    """The parse tree `regex.compile` would build, by the same steps, without compiling."""
    flags = 0
    for _ in range(_FLAG_ROUNDS):
        source = _core.Source(pattern)
        info = _core.Info(flags, source.char_type, {})
        info.guess_encoding = _core.UNICODE  # as regex.compile sets it for a str (2026.11+)
        source.ignore_space = bool(info.flags & _core.VERBOSE)
        try:
            tree = _core._parse_pattern(source, info)
        except _core._UnscopedFlagSet:
            flags = info.global_flags  # a global inline flag: parse again with it
            continue
        if not source.at_end():
            raise _core.error("unbalanced parenthesis", pattern, source.pos)
        return tree
    raise _core.error("too many inline flag changes", pattern, 0)


def _measure(tree: Any, shown: str) -> tuple[int, int]:
    """(largest product of counted repeats along a nesting path, deepest nesting).
    Iterative: the tree may be deep."""
    largest, deepest, visited = 1, 0, 0
    stack: list[tuple[Any, int, int]] = [(tree, 1, 0)]
    while stack:
        node, product, depth = stack.pop()
        visited += 1
        if visited > _MAX_NODES:
            raise ValueError(f"{shown} has too many parts to check")
        if isinstance(node, _core.GreedyRepeat):  # also the lazy and possessive ones
            written = [c for c in (node.min_count, node.max_count) if c is not None]
            product *= max([1, *written])
            depth += 1
        elif hasattr(node, "subpattern"):  # a group, lookaround, atomic or fuzzy part
            depth += 1
        largest, deepest = max(largest, product), max(deepest, depth)
        stack.extend((child, product, depth) for child in _children(node))
    return largest, deepest


def _children(node: Any) -> list[Any]:
    """The sub-nodes of a parse node, whatever the node's kind calls them."""
    found: list[Any] = []
    for value in vars(node).values():
        items = value if isinstance(value, list | tuple) else (value,)
        found.extend(item for item in items if isinstance(item, _core.RegexBase))
    return found
