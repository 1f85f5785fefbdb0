"""Every ```python block of docs/python.md runs as written, from the repository's root."""
import os
import pathlib
import re

import pytest

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), re.S | re.M)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_block_runs(repo, index):
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        exec(compile(BLOCKS[index], f"docs/python.md block {index}", "exec"), {})
    finally:
        os.chdir(cwd)
