"""No memory leaks over many compile-run cycles (resident set size)."""
import numpy as np

import sharc

# 64 KiB arrays: one leaked input, output or result literal per cycle would
# add 64 MiB over the test, a leaked program (module copies, kernels, device
# threads) more.
TEXT = """HloModule leak_check, num_partitions=2
ENTRY %e {
  %x = f32[128,128] parameter(0), sharding={devices=[2,1]0,1}
  %w = f32[128,128] parameter(1)
  %d = f32[128,128] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = f32[128,128] tanh(%d)
}
"""


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_a_thousand_compile_run_cycles_do_not_grow():
    module = sharc.parse(TEXT)
    x = np.full((128, 128), 0.01, np.float32)
    w = np.ones((128, 128), np.float32)
    expected = np.tanh(np.float32(1.28))

    def cycle(i):
        # One device takes the arrays in place (borrowed buffers), two split
        # them through literals: both paths, kernels from the disk cache.
        exe = sharc.compile(module, 1 + i % 2, backend="halide")
        out = exe(x, w)
        assert abs(out[0, 0] - expected) < 1e-5
        exe.report()

    for i in range(100):  # warm up: caches, allocator arenas
        cycle(i)
    before = resident_bytes()
    for i in range(1000):
        cycle(i)
    grown = resident_bytes() - before
    assert grown < 16 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 1000 cycles"
