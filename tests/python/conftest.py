"""Fixtures for the Python package's tests.

CTest runs these with PYTHONPATH pointing at build/python and SHARC_BINARY at
the `sharc` command of the same build (tests/python/CMakeLists.txt); run by
hand they default to build/ in the repository:

    PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python -q
"""
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SHARC_BUILD_DIR", REPO / "build"))
if str(BUILD / "python") not in sys.path:
    sys.path.insert(0, str(BUILD / "python"))

import sharc  # noqa: E402


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def build_dir():
    return BUILD


@pytest.fixture(scope="session")
def examples():
    return REPO / "examples"


@pytest.fixture(scope="session")
def shared():
    path = pathlib.Path(os.environ.get("SHARC_SHARED_DIR", REPO.parent / "shared"))
    if not (path / "conformance").is_dir():
        pytest.skip(f"the shared conformance corpus is not at {path}")
    return path


@pytest.fixture(scope="session")
def cli():
    """Runs the `sharc` command; returns its CompletedProcess (text)."""
    binary = os.environ.get("SHARC_BINARY", str(BUILD / "tools" / "sharc"))

    def run(*args, check=True):
        done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True,
                              timeout=300)
        if check and done.returncode != 0:
            raise AssertionError(f"sharc {' '.join(map(str, args))} failed ({done.returncode}):"
                                 f"\n{done.stderr}")
        return done

    return run


MATMUL_TEXT = """HloModule matmul, num_partitions=2

ENTRY %main {
  %x = f32[8,16] parameter(0), sharding={devices=[2,1]0,1}
  %w = f32[16,4] parameter(1), sharding={replicated}
  ROOT %y = f32[8,4] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


@pytest.fixture()
def matmul():
    return sharc.parse(MATMUL_TEXT, "matmul.hlo")
