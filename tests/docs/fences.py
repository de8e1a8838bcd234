"""The fenced code blocks of the Markdown files a user reads, and the marker
each carries on the line before its opening fence:

    <!-- run: <the test that runs it> -->
    <!-- not run: <why> -->
    <!-- output: <what it is> -->   (a block showing what the block before
                                     it prints: its runner checks it)

Every runner finds its blocks here by the path in its ``run:`` marker, so a
new block is run as soon as it is marked; ``test_doc_blocks.py`` fails for a
block with neither marker, a ``not run`` without a reason, or a ``run``
naming a test that does not exist.

    python3 tests/docs/fences.py RUNNER   # prints the blocks RUNNER runs, as JSON
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The Markdown files whose code blocks users are shown.
DOC_GLOBS = ("README.md", "docs/*.md", "bindings-*/README.md")

_FENCE = re.compile(r"^( *)(```+|~~~+)\s*([^`\s]*)")
_MARKER = re.compile(r"^\s*<!--\s*(run|not run|output):\s*(.*?)\s*-->\s*$")


@dataclasses.dataclass(frozen=True)
class Block:
    path: str  # relative to the repository root
    line: int  # the opening fence's line, 1-based
    lang: str
    code: str
    marker: str | None  # "run", "not run", "output" or None
    argument: str  # the runner's path, or the reason
    heading: str  # the nearest heading above it, without its #s

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def runner(self) -> str | None:
        """The test a ``run:`` marker names (its first word)."""
        return self.argument.split()[0] if self.marker == "run" and self.argument else None


def doc_files(root: Path = ROOT) -> list[Path]:
    return sorted({p for g in DOC_GLOBS for p in root.glob(g)})


def blocks(path: Path, root: Path = ROOT) -> Iterator[Block]:
    """The fenced blocks of one file; an indented block (in a list item)
    has its indentation removed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    heading = ""
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            if lines[i].startswith("#"):
                heading = lines[i].lstrip("#").strip()
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3)
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        marker = _MARKER.match(lines[start - 1]) if start > 0 else None
        yield Block(
            path=path.relative_to(root).as_posix(),
            line=start + 1,
            lang=lang,
            code="\n".join(body) + "\n",
            marker=marker.group(1) if marker else None,
            argument=marker.group(2) if marker else "",
            heading=heading,
        )
        i += 1


def all_blocks(root: Path = ROOT) -> list[Block]:
    return [b for p in doc_files(root) for b in blocks(p, root)]


def run_by(runner: str, root: Path = ROOT) -> list[tuple[Block, Block | None]]:
    """The blocks whose marker names ``runner`` (a path from the root), each
    with the output block that follows it, if any."""
    found = all_blocks(root)
    return [(b, nxt if nxt is not None and nxt.marker == "output" else None)
            for b, nxt in zip(found, [*found[1:], None]) if b.runner == runner]


if __name__ == "__main__":
    json.dump([{**dataclasses.asdict(b), "output": out.code if out else None} for b, out in run_by(sys.argv[1])],
              sys.stdout)
