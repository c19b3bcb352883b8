"""The Python blocks of docs/user-guide.md run, in order, as one program.

A block fenced as ```python runs; ```python norun (code that needs a real cluster) and other
languages do not. The program keeps every line of the guide where it was, blanking the prose,
so a traceback's line number is the line of the guide.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import aistore

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"
FENCE = re.compile(r"^```(\S*)\s*(.*)$")


def guide_program(text: str) -> tuple[str, int]:
    """The runnable blocks of `text` as one program with the guide's line numbers, and how
    many blocks it has."""
    lines = text.splitlines()
    out: list[str] = []
    blocks = 0
    running: bool | None = None  # None: outside a block
    for line in lines:
        fence = FENCE.match(line)
        if running is None and fence:
            language, options = fence.groups()
            running = language == "python" and "norun" not in options.split()
            blocks += running
            out.append("")
        elif running is not None and line.startswith("```"):
            running = None
            out.append("")
        else:
            out.append(line if running else "")
    assert running is None, "unclosed code block"
    return "\n".join(out) + "\n", blocks


def test_guide_program_keeps_line_numbers() -> None:
    text = "prose\n```python\na = 1\n```\n```python norun\nb = 2\n```\n```bash\nls\n```\n"
    program, blocks = guide_program(text)
    assert blocks == 1
    assert program.splitlines()[2] == "a = 1"
    assert "b = 2" not in program and "ls" not in program


def test_user_guide_snippets_run(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the guide's PyTorch section needs torch")
    program, blocks = guide_program(GUIDE.read_text())
    assert blocks >= 10
    script = tmp_path / "user-guide.md.py"
    script.write_text(program)
    env = dict(os.environ)
    # The guide runs against the aistore this test imports (installed, or the source tree).
    package_root = str(Path(aistore.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"


@pytest.mark.parametrize("page", ["README.md", "docs/user-guide.md", "examples/README.md"])
def test_relative_links_resolve(page: str) -> None:
    path = GUIDE.parents[1] / page
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text())
    relative = [t for t in targets if "://" not in t]
    assert relative
    missing = [t for t in relative if not (path.parent / t).exists()]
    assert not missing


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_contents_line_lists_every_section() -> None:
    text = GUIDE.read_text()
    sections = [_anchor(h) for h in re.findall(r"^## (.+)$", text, re.M)]
    contents = text[text.index("Contents: ") : text.index("\n\n", text.index("Contents: "))]
    listed = re.findall(r"\]\(#([^)]+)\)", contents)
    assert listed == sections
