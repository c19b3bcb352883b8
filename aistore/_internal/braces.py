"""Bash-style brace expansion, for object names of multi-object operations.

`{a,b}` alternatives and `{1..10}`, `{01..10}`, `{0..20..5}`, `{a..e}` sequences, nested and in
sequence, expand left to right as bash does; zero-padded bounds pad every number to the wider
bound. A brace group that is neither stays literal. A backslash escapes the next character.

Example:
    >>> list(expand("shard-{00..02}.{tar,tgz}"))  # doctest: +NORMALIZE_WHITESPACE
    ['shard-00.tar', 'shard-00.tgz', 'shard-01.tar', 'shard-01.tgz', 'shard-02.tar', 'shard-02.tgz']
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["expand"]

_INT_SEQ = re.compile(r"^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$")
_CHR_SEQ = re.compile(r"^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$")


def expand(template: str) -> Iterator[str]:
    """Every string the template names, in bash's order."""
    for item in _expand(template):
        yield _unescape(item)


def _expand(s: str) -> Iterator[str]:
    start = 0
    while True:
        group = _find_group(s, start)
        if group is None:
            yield s
            return
        left, right = group
        alternatives = _alternatives(s[left + 1 : right])
        if alternatives is None:  # not an expansion: keep "{", look further
            start = left + 1
            continue
        prefix, suffix = s[:left], s[right + 1 :]
        for alt in alternatives:
            for tail in _expand(alt + suffix):
                yield prefix + tail
        return


def _find_group(s: str, start: int) -> tuple[int, int] | None:
    """The next unescaped `{` at or after start and its matching `}`."""
    i = start
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth, j = 0, i
            while j < len(s):
                d = s[j]
                if d == "\\":
                    j += 2
                    continue
                if d == "{":
                    depth += 1
                elif d == "}":
                    depth -= 1
                    if depth == 0:
                        return i, j
                j += 1
            return None
        i += 1
    return None


def _alternatives(body: str) -> list[str] | None:
    parts = _split_top(body)
    if len(parts) > 1:
        return parts
    return _sequence(body)


def _split_top(body: str) -> list[str]:
    parts, depth, cur, i = [], 0, [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            cur.append(body[i : i + 2])
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def _sequence(body: str) -> list[str] | None:
    if m := _INT_SEQ.match(body):
        first, last = int(m.group(1)), int(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        width = 0
        if _padded(m.group(1)) or _padded(m.group(2)):
            width = max(len(m.group(1)), len(m.group(2)))
        out = []
        rng = range(first, last + 1, step) if first <= last else range(first, last - 1, -step)
        for n in rng:
            out.append(f"{n:0{width}d}" if width else str(n))
        return out
    if m := _CHR_SEQ.match(body):
        first, last = ord(m.group(1)), ord(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        rng = range(first, last + 1, step) if first <= last else range(first, last - 1, -step)
        return [chr(c) for c in rng]
    return None


def _padded(num: str) -> bool:
    digits = num.lstrip("-")
    return len(digits) > 1 and digits.startswith("0")


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)
