"""Every fenced code block of the Markdown files a user reads is either run
by a test, or marked as not run with the reason (``fences.py`` has the
convention). Fails for a block with neither, so a new block cannot go
unnoticed."""

from __future__ import annotations

import pytest

from fences import ROOT, Block, all_blocks, doc_files

BLOCKS = all_blocks()


def _what(b: Block) -> str:
    return f"{b.where} (```{b.lang})"


def test_the_scanner_sees_every_file_and_block() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in doc_files()}
    assert {"README.md", "docs/integrations.md", "bindings-python/README.md", "bindings-node/README.md",
            "bindings-ruby/README.md", "bindings-wasm/README.md"} <= names
    # Each file's fences, counted line by line: every opening fence is a block.
    for p in doc_files():
        fences = sum(1 for line in p.read_text(encoding="utf-8").splitlines() if line.lstrip().startswith("```"))
        assert fences == 2 * sum(1 for b in BLOCKS if b.path == p.relative_to(ROOT).as_posix()), p


@pytest.mark.parametrize("block", BLOCKS, ids=_what)
def test_block_is_run_or_says_why_not(block: Block) -> None:
    assert block.marker is not None, (
        f"{_what(block)} has no marker: put <!-- run: <test> --> (and make that test run it) "
        "or <!-- not run: <reason> --> on the line before its fence")
    if block.marker == "output":
        before = [b for b in BLOCKS if b.path == block.path and b.line < block.line and b.marker != "output"]
        assert before and before[-1].marker == "run", f"{_what(block)}: an output block follows a block that is run"
        return
    if block.marker == "not run":
        assert len(block.argument.split()) >= 3, f"{_what(block)}: a not-run marker gives its reason"
        return
    assert block.runner is not None
    runner = ROOT / block.runner
    assert runner.is_file(), f"{_what(block)}: its runner {block.runner} does not exist"
    # The runner finds its blocks by parsing the Markdown (through fences.py,
    # or rustdoc / the CLI tests reading the file itself).
    text = runner.read_text(encoding="utf-8")
    assert "fences" in text or block.path in text, f"{block.runner} does not read {block.path}"
