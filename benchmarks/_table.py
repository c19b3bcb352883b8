"""The benchmarks' tables: rows of cells as aligned columns, a rule under the header."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def render_table(lines: Sequence[Sequence[str]], left: Collection[int] = (0, 1)) -> str:
    """`lines[0]` is the header; columns whose index is in `left` are left-aligned, the others
    (figures) right-aligned."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    out = []
    for n, line in enumerate(lines):
        cells = [
            c.ljust(w) if i in left else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)
