"""stepsim.search: `stepsim search` run from Python on a space of Llama 3.1 8B plans small enough to
count by hand; its table, pruning and winner read back; the same call resumes; bad input raises the
command line's one line and leaves nothing behind."""

import math

import pytest

import stepsim
from conftest import cli_error

LLAMA = "workloads/llama-3.1-8b.yaml"
MEMORY = {"hardware.memory_GiB": 100000}  # every plan fits: only the rules below shape the space

# One node of 8 GPUs. By docs/search.md's rules: TP 1 and 2, PP 1, 1F1B with ZeRO 1 and 2,
# micro-batch sizes 1 and 2, CP 1 and recompute none; the overlap options take their one value.
# 1F1B at PP 1 runs any count of microbatches: all 2 x 2 x 2 = 8 plans are valid and fit.
ONLY = {"parallel.tp": [1, 2], "parallel.pp": [1], "schedule": ["1f1b"], "parallel.micro_batch_size": [1, 2]}
FIX = {"parallel.cp": 1, "parallel.recompute": "none"}
PLANS = 2 * 2 * 2


def tiny(config, out_dir, **more):
    return stepsim.search(config, MEMORY, out_dir=out_dir, gpus=8, only=ONLY, fix=FIX, max_replays=3, jobs=1, **more)


def rows(table):
    return table.to_dict("records") if hasattr(table, "to_dict") else table


def test_the_table_the_pruning_and_the_winner(scratch):
    result = tiny(LLAMA, scratch / "s")
    table, pruned = rows(result.table), rows(result.pruned)
    assert len(table) == PLANS and len(pruned) == 0
    replayed = [r for r in table if r["status"] == "replayed"]
    assert 1 <= len(replayed) <= 3  # the cap, or the stopping rule before it
    assert all(r["status"] == "estimated" for r in table[len(replayed):])
    steps = [r["step_time_s"] for r in replayed]
    assert all(isinstance(s, float) and s > 0 for s in steps)
    # The winner: the fastest replay, as a plan that replays that step again (the CSV's 6 digits).
    best = result.best
    assert best is not None and table[0]["step_time_s"] == min(steps)
    for key, field in (("parallel.tp", "tp"), ("parallel.pp", "pp"), ("parallel.zero", "zero"), ("schedule", "schedule")):
        assert table[0][key] == getattr(best, field), key
    assert best.gpus == 8
    assert math.isclose(best.simulate().step_time_s, min(steps), rel_tol=1e-5)
    assert result.summary.startswith("stepsim search: Llama-3.1-8B, 8 ")
    assert f"{PLANS} plans (the whole space)" in result.summary
    assert result.out_dir == str(scratch / "s")


def test_the_same_call_resumes_without_replaying(scratch, capsys):
    first = tiny(LLAMA, scratch / "s")
    csv = (scratch / "s" / "search.csv").read_bytes()
    again = tiny(LLAMA, scratch / "s", quiet=False)
    err = capsys.readouterr().err
    assert "(0 run now" in err  # every replay read back from out_dir/points
    assert again.summary == first.summary
    assert (scratch / "s" / "search.csv").read_bytes() == csv


def test_a_plan_from_an_import_is_searched_from_its_text(scratch):
    # The shipped plan on one node with its pipeline folded, exported and imported back: a plan
    # with no file of its own, searched from out_dir/config.yaml.
    plan = stepsim.load(LLAMA, {"cluster.nodes": 1, "parallel.pp": 1, "parallel.split_backward": False})
    script = scratch / "pretrain.sh"
    script.write_text(plan.export_megatron())
    imported = stepsim.import_megatron(script, hardware="h800")
    result = tiny(imported, scratch / "s")
    assert len(rows(result.table)) == PLANS
    assert (scratch / "s" / "config.yaml").exists()
    assert result.best is not None and result.best.gpus == 8


def test_bad_input_raises_the_command_lines_line_and_writes_nothing(scratch):
    out = scratch / "s"
    line = cli_error("search", LLAMA, "--gpus", "12", "-o", str(out))
    with pytest.raises(stepsim.ConfigError) as e:
        stepsim.search(LLAMA, out_dir=out, gpus=12)
    assert str(e.value) == line[len("stepsim: error: "):]
    for bad in ({"gpus": "8"}, {"only": {"parallel.tp": []}}, {"only": ["parallel.tp=1"]}, {"fix": {"parallel.tp": None}},
                {"top": 0}, {"only": {"parallel.tp": [3]}}):
        with pytest.raises(stepsim.ConfigError):
            stepsim.search(LLAMA, out_dir=out, **bad)
    # A text plan's config file is not left behind either.
    imported = stepsim.import_megatron("workloads/examples/megatron-llama3-70b.sh")
    with pytest.raises(stepsim.ConfigError):
        stepsim.search(imported, out_dir=out, gpus=12)
    assert not out.exists()
