"""sharc.compile and Executable: running on NumPy arrays, against NumPy and the CLI."""
import threading
import time

import numpy as np
import pytest

import sharc


def mlp_reference(x, w, bias):
    activation = np.tanh(x @ w + bias)
    return activation, activation.sum(axis=1)


@pytest.fixture(scope="module")
def mlp_inputs():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((16, 4)).astype(np.float32),
            rng.standard_normal(4).astype(np.float32))


@pytest.mark.parametrize("devices", [1, 2])
@pytest.mark.parametrize("backend", ["halide", "interpreter"])
def test_runs_match_numpy_on_every_device_count(examples, mlp_inputs, devices, backend):
    exe = sharc.compile(sharc.load(examples / "sharded_matmul.hlo"), devices, backend=backend)
    assert exe.num_devices == devices
    assert exe.uses_halide == (backend == "halide")
    activation, row_sum = exe(*mlp_inputs)
    want_activation, want_row_sum = mlp_reference(*mlp_inputs)
    assert activation.dtype == np.float32 and activation.shape == (8, 4)
    np.testing.assert_allclose(activation, want_activation, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(row_sum, want_row_sum, rtol=1e-5, atol=1e-5)


def test_multi_device_equals_single_device(examples, mlp_inputs):
    module = sharc.load(examples / "sharded_matmul.hlo")
    one = sharc.compile(module, 1)(*mlp_inputs)
    two = sharc.compile(module, sharc.Mesh(batch=2))(*mlp_inputs)
    for a, b in zip(one, two):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("devices", [1, 2, 4])
def test_partition_specs_over_meshes_of_every_size(matmul, devices):
    mesh = sharc.Mesh(batch=devices)
    module = (matmul.with_mesh(mesh).with_sharding("x", sharc.P("batch", None))
              .with_sharding("w", sharc.P()))
    exe = sharc.compile(module, mesh)
    assert exe.num_devices == devices
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    w = np.random.default_rng(2).standard_normal((16, 4)).astype(np.float32)
    np.testing.assert_allclose(exe(x, w), x @ w, rtol=1e-5, atol=1e-5)


def test_the_module_annotation_sets_the_default_device_count(matmul):
    exe = sharc.compile(matmul)
    assert exe.num_devices == 2
    x = np.arange(128, dtype=np.float32).reshape(8, 16) / 64
    w = np.ones((16, 4), np.float32)
    np.testing.assert_allclose(exe(x, w), x @ w, rtol=1e-6)


def test_results_equal_the_command_on_the_conformance_modules(shared, cli, tmp_path):
    modules = sorted((shared / "conformance" / "partition").glob("*.hlo"))
    assert modules, "no conformance modules"
    rng = np.random.default_rng(3)
    for path in modules:
        module = sharc.load(path)
        inputs = []
        for p in module.parameters:
            if p.dtype.startswith("f"):
                inputs.append(rng.uniform(-1, 1, p.shape).astype(sharc_dtype(p.dtype)))
            else:
                inputs.append(rng.integers(0, 4, p.shape).astype(sharc_dtype(p.dtype)))
        args = []
        for i, array in enumerate(inputs):
            np.save(tmp_path / f"{path.stem}_in{i}.npy", array)
            args += ["--input", tmp_path / f"{path.stem}_in{i}.npy"]
        out_dir = tmp_path / path.stem
        devices = module.num_partitions
        cli("run", path, "--devices", devices, *args, "--output-dir", out_dir)
        got = sharc.compile(module, devices)(*inputs)
        got = got if isinstance(got, tuple) else (got,)
        for i, value in enumerate(got):
            expected = np.load(out_dir / f"out{i}.npy")
            assert value.dtype == expected.dtype, path.name
            np.testing.assert_array_equal(value, expected, err_msg=path.name)


def sharc_dtype(name):
    return {"f32": np.float32, "f64": np.float64, "f16": np.float16, "s32": np.int32,
            "s64": np.int64, "u32": np.uint32, "u8": np.uint8, "s8": np.int8,
            "pred": np.bool_}[name]


def test_wrong_dtype_is_a_type_error_naming_the_parameter(matmul):
    exe = sharc.compile(matmul, backend="interpreter")
    with pytest.raises(TypeError, match=r"input 1 for parameter %w \(f32\[16,4\]\).*float64"):
        exe(np.zeros((8, 16), np.float32), np.zeros((16, 4), np.float64))


def test_wrong_shape_is_a_value_error_naming_the_parameter(matmul):
    exe = sharc.compile(matmul, backend="interpreter")
    with pytest.raises(ValueError, match=r"input 0 for parameter %x.*shape \(16, 8\)"):
        exe(np.zeros((16, 8), np.float32), np.zeros((16, 4), np.float32))


def test_wrong_argument_count_is_a_type_error(matmul):
    exe = sharc.compile(matmul, backend="interpreter")
    with pytest.raises(TypeError, match="takes 2 argument"):
        exe(np.zeros((8, 16), np.float32))


def test_lists_and_strided_arrays_are_accepted(matmul):
    exe = sharc.compile(matmul, backend="interpreter")
    x = np.arange(256, dtype=np.float32).reshape(16, 16)[::2]  # not contiguous
    w = [[1.0] * 4 for _ in range(16)]                        # a nested list
    np.testing.assert_allclose(exe(x, w), x @ np.ones((16, 4), np.float32), rtol=1e-6)


def test_a_mesh_that_does_not_fit_is_a_partition_error(matmul):
    with pytest.raises(sharc.PartitionError):
        sharc.compile(matmul, 3)
    with pytest.raises(ValueError, match="devices"):
        sharc.compile(matmul, 0)
    with pytest.raises(ValueError, match="backend"):
        sharc.compile(matmul, 2, backend="gpu")
    with pytest.raises(TypeError):
        sharc.compile(str(matmul))


def test_report_is_the_command_s_json(examples, cli):
    import json
    path = examples / "sharded_matmul.hlo"
    report = sharc.compile(sharc.load(path), 2).report()
    assert report == json.loads(cli("report", path, "--json", "--devices", "2").stdout)
    assert report["schema_version"] >= 1
    assert report["num_devices"] == 2


def test_integer_pred_and_half_types_round_trip():
    module = sharc.parse("""HloModule types
ENTRY %e {
  %a = s32[3] parameter(0)
  %b = pred[3] parameter(1)
  %h = f16[3] parameter(2)
  %bf = bf16[3] parameter(3)
  %n = s32[3] negate(%a)
  %nb = pred[3] not(%b)
  %hh = f16[3] add(%h, %h)
  %bb = bf16[3] add(%bf, %bf)
  ROOT %t = (s32[3], pred[3], f16[3], bf16[3]) tuple(%n, %nb, %hh, %bb)
}
""")
    exe = sharc.compile(module)
    bf16_bits = (np.array([1.0, -2.0, 0.5], np.float32).view(np.uint32) >> 16).astype(np.uint16)
    n, nb, hh, bb = exe(np.array([1, -2, 3], np.int32), np.array([True, False, True]),
                        np.array([0.5, 1, 2], np.float16), bf16_bits)
    np.testing.assert_array_equal(n, [-1, 2, -3])
    np.testing.assert_array_equal(nb, [False, True, False])
    assert hh.dtype == np.float16
    np.testing.assert_array_equal(hh, [1, 2, 4])
    assert bb.dtype == np.uint16
    as_f32 = (bb.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(as_f32, [2.0, -4.0, 1.0])


def test_outputs_are_not_copies_of_one_another(matmul):
    exe = sharc.compile(matmul, backend="interpreter")
    x, w = np.ones((8, 16), np.float32), np.ones((16, 4), np.float32)
    first = exe(x, w)
    second = exe(x, w)
    first[0, 0] = -1  # results are the caller's to write
    assert second[0, 0] == 16
    assert first.base is not None  # the array views the result's own memory


def test_time_stats_text_and_notes(examples, mlp_inputs):
    exe = sharc.compile(sharc.load(examples / "sharded_matmul.hlo"), 2, backend="halide")
    timing = exe.time(3)  # random inputs before any call
    assert len(timing.seconds) == 3 and timing.min > 0 and timing.median >= timing.min
    exe(*mlp_inputs)
    stats = exe.stats()
    assert len(stats) == 2 and all(s["kernel_launches"] > 0 for s in stats)
    assert len(exe.time(2).seconds) == 2  # the last call's inputs
    assert "all-reduce" not in exe.text("prepared")
    assert "f32[4,16]" in exe.text("per_device")  # the batch split in two
    assert "sharding=" in exe.text("propagated")
    assert exe.notes == ""
    with pytest.raises(ValueError, match="stage"):
        exe.text("final")


def test_pass_timings_report_every_compiler_pass(examples, mlp_inputs):
    module = sharc.load(examples / "sharded_matmul.hlo")
    timed = sharc.compile(module, 2, backend="interpreter", pass_timings=True)
    lines = timed.pass_timings.splitlines()
    assert lines[0].startswith("Total runtime (ms) of HLO passes: ")
    assert lines[1] == "Pass name, num runs, time (ms)"
    passes = {line.split(", ")[0]: line.split(", ") for line in lines[2:]}
    assert "propagate" in passes and "localize" in passes
    assert all(int(runs) >= 1 and float(ms) >= 0 for _, runs, ms in passes.values())
    # Longest first, as `--pass-timings` prints them.
    times = [float(ms) for _, _, ms in (line.split(", ") for line in lines[2:])]
    assert times == sorted(times, reverse=True)
    assert sharc.compile(module, 2, backend="interpreter").pass_timings == ""
    assert module.compile(2, backend="interpreter", pass_timings=True).pass_timings != ""


def test_the_gil_is_released_while_running():
    module = sharc.parse("""HloModule big
ENTRY %e {
  %a = f32[384,384] parameter(0)
  ROOT %d = f32[384,384] dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
""")
    exe = sharc.compile(module, backend="interpreter")
    a = np.ones((384, 384), np.float32)
    ticks = 0
    done = threading.Event()

    def run():
        exe(a)
        done.set()

    worker = threading.Thread(target=run)
    start = time.perf_counter()
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    elapsed = time.perf_counter() - start
    # A run holding the GIL would leave this loop one tick at most.
    assert elapsed > 0.02, "the run was too quick to tell"
    assert ticks >= 5


def test_runs_from_two_threads_take_turns(matmul):
    exe = sharc.compile(matmul, 2)
    x, w = np.ones((8, 16), np.float32), np.ones((16, 4), np.float32)
    results = []
    threads = [threading.Thread(target=lambda: results.append(exe(x, w))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4
    for r in results:
        np.testing.assert_array_equal(r, np.full((8, 4), 16, np.float32))


def test_one_device_runs_read_numpy_memory_in_place():
    module = sharc.parse("""HloModule in_place
ENTRY %e {
  %x = f32[1024] parameter(0)
  %y = f32[1024] parameter(1)
  %s = f32[1024] add(%x, %y)
  ROOT %t = (f32[1024], f32[1024]) tuple(%s, %x)
}
""")
    exe = sharc.compile(module, backend="halide")
    storage = np.arange(2049, dtype=np.float32)
    x = storage[1:1025]          # 4 bytes past an allocation's alignment
    y = np.ones(1024, np.float32)
    total, same = exe(x, y)
    np.testing.assert_array_equal(total, x + 1)
    np.testing.assert_array_equal(same, x)
    # A result that is an input comes back as a copy, never as the input.
    assert not np.shares_memory(same, x)
    x[0] = 100
    assert same[0] == 1


def test_profile_names_kernels_and_collectives(tmp_path):
    module = sharc.parse("""HloModule profiled, num_partitions=2
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY %e {
  %x = f32[64,32] parameter(0), sharding={devices=[1,2]0,1}
  %w = f32[32,16] parameter(1), sharding={devices=[2,1]0,1}
  %d = f32[64,16] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
  ROOT %t = f32[64,16] tanh(%d), sharding={replicated}
}
""")
    exe = sharc.compile(module, 2, backend="halide")
    trace = tmp_path / "trace.json"
    profile = exe.profile(3, trace=str(trace))
    assert profile["schema_version"] == 1 and profile["runs"] == 3 and profile["num_devices"] == 2
    kinds = {e["kind"] for e in profile["entries"]}
    assert "kernel" in kinds and "all-reduce" in kinds, kinds
    dot = next(e for e in profile["entries"] if e["name"] == "d.partial")
    assert dot["kind"] == "kernel" and dot["instructions"][0].startswith("d.partial")
    assert dot["flops"] == 2 * 64 * 16 * 16  # one device's half of the contraction
    assert dot["calls"] == 1 and dot["seconds"] > 0
    assert profile["limits"]["fma_gflops"] > 0 and profile["limits"]["memory_gbps"] > 0
    seconds = [e["seconds"] for e in profile["entries"]]
    assert seconds == sorted(seconds, reverse=True)
    assert "limit%" in profile["text"]
    import json
    events = json.loads(trace.read_text())["traceEvents"]
    assert {e["tid"] for e in events if e["ph"] == "X"} == {0, 1}


def test_complex_arrays_run_as_numpy_complex():
    module = sharc.parse("""HloModule cx
ENTRY e {
  x = c64[4] parameter(0)
  y = c128[2,2] parameter(1)
  sq = c64[4] multiply(x, x)
  ROOT t = (c64[4], c128[2,2]) tuple(sq, y)
}""")
    x = np.array([1 + 2j, 3 - 1j, 0.5j, -2], dtype=np.complex64)
    y = np.array([[1 + 1j, 2], [3j, -4 - 0.5j]], dtype=np.complex128)
    for devices in (1, 2):
        sq, same = sharc.compile(module, devices)(x, y)
        assert sq.dtype == np.complex64 and same.dtype == np.complex128
        np.testing.assert_allclose(sq, x * x, rtol=1e-6)
        np.testing.assert_array_equal(same, y)


def test_shardy_shard_maps_from_jax_run_and_match_numpy(repo):
    # JAX's HLO under Shardy: a shard_map manual over "x" of a 2x2 mesh,
    # squaring its block and summing the squares over "x" with an all-reduce.
    module = sharc.load(repo / "tests" / "lit" / "inputs" / "shardy_partial_manual.hlo")
    exe = sharc.compile(module, 4)
    a = np.arange(64, dtype=np.float32).reshape(8, 8) / 8
    squares, block_sums = exe(a)
    np.testing.assert_allclose(squares, a * a, rtol=1e-6)
    np.testing.assert_allclose(block_sums, a[:4] * a[:4] + a[4:] * a[4:], rtol=1e-6)
