"""Module-to-module stages: each must print exactly what the `sharc` command does."""
import json

import pytest

import sharc


def test_propagate_equals_the_command(examples, cli):
    path = examples / "sharded_matmul.hlo"
    assert str(sharc.load(path).propagate()) == cli("propagate", path).stdout


def test_propagate_with_a_device_count(examples, cli, tmp_path):
    path = examples / "constrained_mlp.hlo"
    module = sharc.load(path)
    devices = module.num_partitions
    assert str(module.propagate(devices=devices)) == cli("propagate", path, "--devices",
                                                         devices).stdout


def test_partition_equals_the_command_at_every_stage(examples, cli):
    path = examples / "sharded_matmul.hlo"
    module = sharc.load(path)
    for stage in ("insert-reshards", "reshard-to-collectives", "localize"):
        expected = cli("partition", path, "--stop-after", stage).stdout
        assert str(module.partition(stop_after=stage)) == expected, stage
    assert str(module.partition(propagate=False)) == cli("partition", path,
                                                         "--no-propagate").stdout
    with pytest.raises(ValueError, match="stop_after"):
        module.partition(stop_after="everything")


def test_mapreduce_modes_partition_like_the_command(examples, cli):
    path = examples / "fedavg_round.hlo"
    module = sharc.load(path)
    for mode in ("annotated", "ns", "loop"):
        expected = cli("partition", path, "--mapreduce-mode", mode).stdout
        assert str(module.partition(mapreduce_mode=mode)) == expected, mode
    with pytest.raises(ValueError, match="mapreduce_mode"):
        module.partition(mapreduce_mode="fast")


def test_explain_returns_the_chain_as_data(examples, cli):
    path = examples / "sharded_matmul.hlo"
    explanation = sharc.load(path).explain("row_sum")
    assert explanation["text"] == cli("propagate", path, "--explain", "row_sum").stdout
    assert explanation["name"] == "row_sum"
    assert explanation["sharding"] == "{devices=[2]0,1}"
    steps = explanation["steps"]
    assert steps[0]["value"] == "main/row_sum"
    assert all(step["how"] for step in steps)
    # Each step leads to the next, back to an annotation.
    for step, following in zip(steps, steps[1:]):
        assert step["from"] == following["value"]
    assert steps[-1]["from"] is None
    with pytest.raises(KeyError, match="no instruction named"):
        sharc.load(path).explain("nothing_by_this_name")


def test_explain_carries_the_partitioners_plan(examples, cli):
    # The same text as `sharc partition --explain`, from one implementation.
    path = examples / "sharded_matmul.hlo"
    explanation = sharc.load(path).explain("row_sum")
    assert explanation["plan"] == cli("partition", path, "--explain", "row_sum").stdout
    assert "chose plan" in explanation["plan"]


def test_grad_jvp_transpose_equal_the_commands(examples, cli, tmp_path):
    loss = examples / "federated_loss.hlo"
    module = sharc.load(loss)
    assert str(module.grad()) == cli("grad", loss).stdout
    assert str(module.grad(wrt=[0])) == cli("grad", loss, "--wrt", "0").stdout
    assert str(module.jvp()) == cli("jvp", loss).stdout
    linear = tmp_path / "linear.hlo"
    linear.write_text("""HloModule linear
ENTRY %f {
  %x = f32[4,3] parameter(0)
  %w = f32[3,2] parameter(1)
  ROOT %y = f32[4,2] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
""")
    assert str(sharc.load(linear).transpose(1)) == cli("transpose", linear, "--linear",
                                                       "1").stdout


def test_transform_errors_are_transform_errors(matmul):
    # The gradient needs a scalar-valued function; matmul returns f32[8,4].
    with pytest.raises(sharc.TransformError, match="scalar"):
        matmul.grad()


def test_compare_equals_the_command(examples, cli):
    for name in ("sharded_matmul.hlo", "fedavg_round.hlo"):
        path = examples / name
        rows = sharc.compare(sharc.load(path))
        expected = json.loads(cli("compare", path, "--json").stdout)
        assert [row["variant"] for row in rows] == [k for k in expected if k != "schema_version"]
        for row in rows:
            variant = dict(row)
            label = variant.pop("variant")
            assert variant == expected[label], label
    labels = [row["variant"] for row in sharc.compare(sharc.load(examples / "fedavg_round.hlo"))]
    assert labels == ["annotated", "ns", "loop"]


def test_compare_on_another_device_count(matmul, cli, tmp_path):
    module = matmul.with_mesh(sharc.Mesh(data=4)).with_sharding("x", sharc.P("data", None))
    path = tmp_path / "matmul4.hlo"
    path.write_text(str(module))
    rows = sharc.compare(module, 4)
    expected = json.loads(cli("compare", path, "--json", "--devices", "4").stdout)
    assert rows[0]["num_devices"] == 4
    assert {k: v for k, v in rows[1].items() if k != "variant"} == expected["unannotated"]


def test_a_mesh_that_does_not_fit_is_a_partition_error(matmul):
    with pytest.raises(sharc.PartitionError, match="device"):
        matmul.partition(devices=3)
