"""Plan.export_megatron and Plan.export_torchtitan: the text `stepsim export` writes, which imports
back into the same plan; a plan the tool cannot express raises the command line's error line."""

import subprocess

import pytest

import stepsim
from conftest import ROOT, cli_error, stepsim_binary

LLAMA = "workloads/llama-3.1-8b.yaml"
# Megatron-LM cannot split the backward without its MoE overlap options (export's own rule).
MEGATRON_PLAN = {"parallel.split_backward": False}
# torchtitan runs FSDP (ZeRO-3) under its own release profile; 8 microbatches of one sequence per
# replica (512 sequences over 64 GPUs).
TORCHTITAN_PLAN = {"software.profile": "torchtitan", "schedule": "fsdp", "parallel.pp": 1, "parallel.zero": 3,
                   "parallel.microbatches": 8, "parallel.split_backward": False}

FIELDS = ("gpus", "gpus_per_node", "tp", "pp", "cp", "ep", "dp", "zero", "microbatches", "global_batch", "seq_len",
          "schedule", "tokens_per_step")


def cli_export(tool: str, overrides: dict) -> str:
    sets = [a for k, v in overrides.items() for a in ("--set", f"{k}={str(v).lower() if isinstance(v, bool) else v}")]
    return subprocess.run([stepsim_binary(), "export", tool, LLAMA, *sets], cwd=ROOT, check=True,
                          stdout=subprocess.PIPE, text=True).stdout


def test_export_megatron_is_the_command_lines_and_imports_back(scratch):
    plan = stepsim.load(LLAMA, MEGATRON_PLAN)
    text = plan.export_megatron()
    assert text == cli_export("megatron", MEGATRON_PLAN)
    path = scratch / "pretrain.sh"
    path.write_text(text)
    back = stepsim.import_megatron(path, hardware="h800")
    assert (plan.pp, plan.schedule) == (4, "1f1b")  # the shipped plan: a pipeline, not a trivial one
    for field in FIELDS:
        assert getattr(back, field) == getattr(plan, field), field


def test_export_torchtitan_is_the_command_lines_and_imports_back(scratch):
    plan = stepsim.load(LLAMA, TORCHTITAN_PLAN)
    text = plan.export_torchtitan()
    assert text == cli_export("torchtitan", TORCHTITAN_PLAN)
    path = scratch / "job.toml"
    path.write_text(text)
    back = stepsim.import_torchtitan(path, plan.gpus, hardware="h800")
    for field in FIELDS:
        assert getattr(back, field) == getattr(plan, field), field


def test_a_plan_the_tool_cannot_express_raises_the_command_lines_line():
    shipped = stepsim.load(LLAMA)
    # Megatron-LM: the shipped plan splits its backward; torchtitan: not its release, and ZeRO-1.
    for tool, export in (("megatron", shipped.export_megatron), ("torchtitan", shipped.export_torchtitan)):
        line = cli_error("export", tool, LLAMA)
        assert line.startswith("stepsim: error: ")
        with pytest.raises(stepsim.ConfigError) as e:
            export()
        assert str(e.value) == line[len("stepsim: error: "):]
