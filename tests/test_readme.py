"""The README's Python examples run against the current API (one namespace, in order)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_readme_python_blocks_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has no Python example"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    # The worked example's own claims, recomputed.
    st = namespace["st"]
    assert namespace["plan"].r == 8 and namespace["plan"].checkpoint_every_steps == 15
    assert st.r_star_rule(292) == 9
