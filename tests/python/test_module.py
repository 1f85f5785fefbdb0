"""sharc.Module: parsing, printing, verifying, looking at values, annotating."""
import numpy as np
import pytest

import sharc


def test_load_prints_the_canonical_text_of_sharc_fmt(examples, cli):
    path = examples / "sharded_matmul.hlo"
    module = sharc.load(path)
    assert str(module) == cli("fmt", path).stdout
    again = sharc.parse(str(module))
    assert str(again) == str(module)


def test_parse_reports_parameters_and_result(matmul):
    assert matmul.name == "matmul"
    assert matmul.num_partitions == 2
    assert matmul.mesh is None
    x, w = matmul.parameters
    assert (x.name, x.dtype, x.shape, x.index) == ("x", "f32", (8, 16), 0)
    assert x.sharding == "{devices=[2,1]0,1}"
    assert x.spec is None  # no named mesh to spell it over
    assert w.sharding == "{replicated}"
    result = matmul.result
    assert (result.name, result.shape, result.type) == ("y", (8, 4), "f32[8,4]")
    assert result.sharding is None


def test_tuple_result_has_no_array_shape(examples):
    result = sharc.load(examples / "sharded_matmul.hlo").result
    assert result.shape is None and result.dtype is None
    assert result.type == "(f32[8,4], f32[8])"
    assert result.sharding == "{{devices=[2,1]0,1}, {devices=[2]0,1}}"


def test_mesh_and_partition_specs(matmul):
    meshed = matmul.with_mesh(sharc.Mesh(data=2))
    assert meshed.mesh == sharc.Mesh("data=2")
    assert meshed.num_partitions == 2
    assert matmul.mesh is None  # modules are values: the original is unchanged
    assert meshed.parameters[0].spec == sharc.P("data", None)
    assert meshed.parameters[1].spec == sharc.P(None, None)
    split = meshed.with_sharding("w", sharc.P(None, "data"))
    assert split.parameters[1].sharding == "{devices=[1,2]0,1}"
    assert str(split.parameters[1].spec) == "P(None, data)"
    rooted = split.with_result_sharding("{devices=[1,2]0,1}")
    assert rooted.result.spec == sharc.P(None, "data")


def test_mesh_spellings_agree():
    assert sharc.Mesh(data=2, model=4) == sharc.Mesh({"data": 2, "model": 4})
    assert sharc.Mesh("data=2,model=4") == sharc.Mesh("{data=2, model=4}")
    mesh = sharc.Mesh(data=2, model=4)
    assert (mesh.num_devices, mesh.shape, mesh.axis_names) == (8, (2, 4), ("data", "model"))
    assert str(mesh) == "data=2,model=4" and repr(mesh) == "Mesh(data=2, model=4)"
    with pytest.raises(ValueError, match="sizes are integers"):
        sharc.Mesh(data=0)
    with pytest.raises(ValueError):
        sharc.Mesh("data")


def test_partition_spec_spelling():
    assert str(sharc.P(("data", "model"), None)) == "P((data,model), None)"
    assert sharc.P(["x"]) == sharc.P("x")
    assert str(sharc.P()) == "P()"
    with pytest.raises(TypeError):
        sharc.P(3)


def test_parse_error_names_file_line_and_column():
    with pytest.raises(sharc.ParseError) as info:
        sharc.parse("HloModule m\n\nENTRY %e {\n  %x = f32[4 parameter(0)\n}\n", "bad.hlo")
    message = str(info.value)
    assert message.startswith("bad.hlo:4:")
    assert "error:" in message
    assert info.value.code == "INVALID_ARGUMENT"
    assert isinstance(info.value, sharc.Error)


def test_verify_error_names_the_instruction():
    text = """HloModule m
ENTRY %e {
  %x = f32[4] parameter(0)
  ROOT %y = f32[5] negate(%x)
}
"""
    with pytest.raises(sharc.VerifyError, match="%y"):
        sharc.parse(text, "shape.hlo")


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        sharc.load(tmp_path / "absent.hlo")


def test_bad_annotations_raise_value_error_naming_the_value(matmul):
    with pytest.raises(ValueError, match=r"parameter 0 \(%x: f32\[8,16\]\)"):
        matmul.with_sharding(0, "{devices=[2,1,1]0,1}")
    with pytest.raises(ValueError, match="needs a named mesh"):
        matmul.with_sharding(0, sharc.P("data", None))
    with pytest.raises(IndexError, match="out of range"):
        matmul.with_sharding(5, "{replicated}")
    with pytest.raises(KeyError, match="no value named %nope"):
        matmul.with_sharding("nope", "{replicated}")
    with pytest.raises(ValueError, match="mesh"):
        matmul.with_mesh("data=0")


def test_any_value_can_be_annotated_by_name(matmul):
    constrained = matmul.with_sharding("y", "{devices=[1,2]<=[2]}")
    assert constrained.result.sharding == "{devices=[1,2]<=[2]}"
    assert "sharding={devices=[1,2]<=[2]}" in str(constrained)


def test_verify_passes_on_a_valid_module(matmul):
    assert matmul.verify() is None


def test_module_constructor_is_not_public():
    with pytest.raises(TypeError, match="sharc.parse"):
        sharc.Module("HloModule m")


def test_help_is_useful():
    assert "device count or a sharc.Mesh" in sharc.compile.__doc__
    assert "GIL" in sharc.compile.__doc__
    assert sharc.__version__.count(".") == 2


def test_narrow_types_compute_between_converts():
    # f8 values inside a program run (0.1 rounds to 13/128; 500 is past
    # e4m3fn's 448 and it has no infinity: NaN).
    module = sharc.parse("HloModule narrow\nENTRY %e {\n  %x = f32[4] parameter(0)\n"
                         "  %q = f8e4m3fn[4] convert(%x)\n  %s = f8e4m3fn[4] add(%q, %q)\n"
                         "  ROOT %y = f32[4] convert(%s)\n}\n")
    out = sharc.compile(module)(np.array([0.1, 1, 500, -3], np.float32))
    assert out[0] == 0.203125 and out[1] == 2 and np.isnan(out[2]) and out[3] == -6
    # NumPy has no f8 dtype: an f8 argument is refused by name.
    f8_in = sharc.parse("HloModule narrow\nENTRY %e {\n  %x = f8e4m3fn[4] parameter(0)\n"
                        "  ROOT %y = f8e4m3fn[4] negate(%x)\n}\n")
    assert f8_in.parameters[0].dtype == "f8e4m3fn"
    with pytest.raises(TypeError, match="f8e4m3fn has no NumPy dtype"):
        sharc.compile(f8_in)(np.zeros(4, np.uint8))
