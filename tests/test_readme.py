"""The README's Python examples run and print exactly the output the README shows.

The convention: a ```python block is run (all of them in order, in one
namespace); when a ```text block follows it directly, that block is what it
prints, character for character; a block with no ```text block after it
prints nothing.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

# A fenced block and the text between it and the next one.
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


def examples(text: str) -> list[tuple[str, str | None]]:
    """Each ```python block of ``text`` with the ```text block right after it (or ``None``).

    Examples
    --------
    >>> examples("```python\\nprint(1)\\n```\\n\\n```text\\n1\\n```\\n```python\\nx = 2\\n```\\n")
    [('print(1)\\n', '1\\n'), ('x = 2\\n', None)]
    """
    blocks = [(m.group(1), m.group(2), m.start(), m.end()) for m in _FENCE.finditer(text)]
    found = []
    for i, (kind, body, _, end) in enumerate(blocks):
        if kind != "python":
            continue
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        shown = None
        if following and following[0] == "text" and not text[end : following[2]].strip():
            shown = following[1]
        found.append((body, shown))
    return found


def test_the_convention_is_read_as_documented():
    assert examples("```python\nprint(1)\n```\nprose\n```text\n1\n```\n") == [("print(1)\n", None)]
    assert examples("```bash\nls\n```\n") == []
    # Every output block of the README belongs to a Python block, and there are some.
    readme = README.read_text()
    shown = [s for _, s in examples(readme) if s is not None]
    assert shown and len(shown) == readme.count("```text\n")


@pytest.mark.slow
def test_readme_python_blocks_print_what_the_readme_shows() -> None:
    namespace: dict = {}
    for code, shown in examples(README.read_text()):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(README), "exec"), namespace)
        assert out.getvalue() == (shown or ""), code
