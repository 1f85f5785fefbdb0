"""The examples in examples/python run and do what they say."""
import os
import subprocess
import sys


def run_example(repo, build_dir, name, *args):
    env = dict(os.environ, PYTHONPATH=str(build_dir / "python"), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, str(repo / "examples" / "python" / name), *args],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_compare_shardings_plots_memory_and_bytes_sent(repo, build_dir, tmp_path):
    out = run_example(repo, build_dir, "compare_shardings.py", "--out", str(tmp_path))
    assert "annotated" in out and "unannotated" in out
    assert "4 device(s)" in out
    png = tmp_path / "constrained_mlp_devices.png"
    assert png.stat().st_size > 1000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_mapreduce_modes_agree(repo, build_dir):
    out = run_example(repo, build_dir, "mapreduce_modes.py")
    for mode in ("annotated", "ns", "loop"):
        assert mode in out
    assert "all three lowerings compute the same result" in out
