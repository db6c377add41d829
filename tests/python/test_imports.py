"""stepsim.import_megatron and stepsim.import_torchtitan: the plan `stepsim import` writes, loaded."""

import subprocess

import pytest

import stepsim
from conftest import ROOT, cli_error, cli_json, stepsim_binary

MEGATRON = "workloads/examples/megatron-llama3-70b.sh"
TORCHTITAN = "workloads/examples/torchtitan-llama3-70b.toml"


def cli_import(*args: str) -> str:
    return subprocess.run([stepsim_binary(), "import", *args, "--quiet"], cwd=ROOT, check=True,
                          stdout=subprocess.PIPE, text=True).stdout


def same_report(plan: stepsim.Plan, yaml_text: str, scratch) -> None:
    path = scratch / "plan.yaml"
    path.write_text(yaml_text)
    ours, theirs = plan.roofline().to_dict(), cli_json("roofline", str(path))
    assert ours.pop("config") == plan.source and theirs.pop("config") == str(path)
    assert ours == theirs


def test_import_megatron_is_the_command_lines_plan(scratch):
    plan = stepsim.import_megatron(MEGATRON)
    assert plan.yaml == cli_import("megatron", MEGATRON)
    assert plan.source == MEGATRON
    assert plan.model_name and plan.gpus > 0
    assert any("not imported" in n or n for n in plan.import_notes)
    same_report(plan, plan.yaml, scratch)
    # Options as the command line's --gpus, --gpus-per-node, --hardware.
    other = stepsim.import_megatron(MEGATRON, gpus=128, gpus_per_node=8, hardware="h200")
    assert other.yaml == cli_import("megatron", MEGATRON, "--gpus", "128", "--gpus-per-node", "8", "--hardware", "h200")
    assert (other.gpus, other.hardware_name) == (128, stepsim.load(None, {"hardware.preset": "h200"}).hardware_name)


def test_import_torchtitan_is_the_command_lines_plan(scratch):
    plan = stepsim.import_torchtitan(TORCHTITAN, gpus=64)
    assert plan.yaml == cli_import("torchtitan", TORCHTITAN, "--gpus", "64")
    assert plan.gpus == 64
    same_report(plan, plan.yaml, scratch)


def test_an_imported_plan_takes_variants_and_pickles():
    import pickle
    plan = stepsim.import_torchtitan(TORCHTITAN, gpus=64)
    variant = plan.with_({"parallel.microbatches": plan.microbatches // 2})
    assert variant.microbatches == plan.microbatches // 2 and variant.yaml == plan.yaml
    assert pickle.loads(pickle.dumps(variant)).roofline() == variant.roofline()


@pytest.mark.parametrize("gpus", [0, -8, 2**40])
def test_a_bad_gpu_count_is_refused_as_by_the_command_line(gpus):
    with pytest.raises(stepsim.ConfigError) as e:
        stepsim.import_torchtitan(TORCHTITAN, gpus=gpus)
    theirs = cli_error("import", "torchtitan", TORCHTITAN, "--gpus", str(gpus))
    assert str(e.value).replace("gpus ", "--gpus ", 1) == theirs[len("stepsim: error: "):]


@pytest.mark.parametrize("gpus", [True, 8.0, "8", None])
def test_a_gpu_count_must_be_an_int(gpus):
    with pytest.raises(stepsim.ConfigError, match="gpus"):
        stepsim.import_torchtitan(TORCHTITAN, gpus=gpus)


def test_import_errors_name_what_is_wrong(scratch):
    with pytest.raises(stepsim.ConfigError, match="hardware"):
        stepsim.import_megatron(MEGATRON, hardware="h9000")
    with pytest.raises(stepsim.ConfigError, match="no-such.sh"):
        stepsim.import_megatron(scratch / "no-such.sh")
    bad = scratch / "bad.toml"
    bad.write_text("[parallelism\n")
    with pytest.raises(stepsim.ConfigError, match="bad.toml"):
        stepsim.import_torchtitan(bad, gpus=8)
    with pytest.raises(TypeError):
        stepsim.import_megatron(None)
