"""Plan.roofline(), Plan.memory() and Plan.simulate(): typed results whose to_dict() is the command
line's --json, tables as DataFrames, traces, progress."""

import json
import os

import pytest

import stepsim
from conftest import ROOT, cli_error, cli_json, stepsim_binary, without_wall_time

LLAMA_8B = "workloads/llama-3.1-8b.yaml"


@pytest.fixture(scope="module")
def llama():
    return stepsim.load(LLAMA_8B)


@pytest.fixture(scope="module")
def llama_sim(llama):
    return llama.simulate()


def test_roofline_is_the_command_lines(llama):
    roof = llama.roofline()
    assert roof.to_dict() == cli_json("roofline", LLAMA_8B)
    d = roof.to_dict()
    for field in ("step_time_s", "compute_s", "comm_s", "exposed_comm_s", "bubble_s", "ep_comm_s", "pp_comm_s",
                  "dp_comm_s", "tp_comm_s", "cp_comm_s", "mfu", "tokens_per_s_per_gpu", "achieved_tflops_per_gpu"):
        assert getattr(roof, field) == d[field], field
    assert roof.plan == d["plan"] and roof.assumed == d["assumed"]
    # The closed forms' own identity (docs/output.md): max(compute, comm) + bubble.
    assert roof.step_time_s == pytest.approx(max(roof.compute_s, roof.comm_s) + roof.bubble_s, rel=1e-12)
    assert "Roofline(step_time_s=" in repr(roof)


def test_memory_is_the_roofline_reports(llama):
    memory = llama.memory()
    d = cli_json("roofline", LLAMA_8B)["memory"]
    assert memory.to_dict() == d
    for field in ("rank", "layers", "in_flight_microbatches", "weights_bytes", "grads_bytes", "optimizer_bytes",
                  "buffers_bytes", "activations_bytes", "total_bytes", "capacity_bytes", "fits"):
        assert getattr(memory, field) == d[field], field
    assert memory.capacity_bytes == 80 * 2**30  # hardware.memory_GiB of the H800 preset
    assert memory.fits == (memory.total_bytes <= memory.capacity_bytes)
    assert memory == llama.roofline().memory


def test_the_checked_by_line_prints_the_command_lines_step(llama_sim):
    cli = cli_json("simulate", LLAMA_8B)
    assert llama_sim.step_time_s == cli["step_time_s"]
    assert without_wall_time(llama_sim.to_dict()) == without_wall_time(cli)


def test_simulation_fields_read_the_report(llama_sim):
    d = llama_sim.to_dict()
    for field in ("step_time_s", "compute_s", "exposed_comm_s", "bubble_s", "exposed_comm_share",
                  "bubble_share_of_compute", "exposed_by_kind", "critical_rank", "tokens_per_step",
                  "tokens_per_s_per_gpu", "vs_roofline", "mfu", "achieved_tflops_per_gpu", "megatron_tflops_per_gpu",
                  "explanation"):
        assert getattr(llama_sim, field) == d[field], field
    assert llama_sim.tokens_per_step == 512 * 8192
    assert (llama_sim.mode, llama_sim.fidelity) == (d["sim"]["mode"], d["sim"]["fidelity"])
    assert llama_sim.activities == d["sim"]["activities"] and llama_sim.wall_s == d["sim"]["wall_s"]
    assert llama_sim.roofline.to_dict() == d["roofline"]
    memory = llama_sim.memory
    assert memory.to_dict() == d["memory"]
    assert memory.peak_bytes == d["memory"]["peak_bytes"] and memory.fits == d["memory"]["fits"]
    assert memory.breakdown == d["memory"]["breakdown"]
    assert llama_sim.trace is None
    # A result is a copy: changing what to_dict() gave changes nothing.
    d["step_time_s"] = -1
    assert llama_sim.step_time_s > 0


def test_per_rank_and_per_layer_tables_are_dataframes(llama_sim):
    pandas = pytest.importorskip("pandas")
    d = llama_sim.to_dict()
    ranks = llama_sim.ranks
    assert isinstance(ranks, pandas.DataFrame)
    assert list(ranks.index) == [r["rank"] for r in d["ranks"]]
    # Every rank splits its step exactly into compute, exposed communication and bubble.
    split = ranks["compute_s"] + ranks["exposed_comm_s"] + ranks["bubble_s"]
    assert (abs(split - ranks["step_time_s"]) <= 1e-9 * ranks["step_time_s"]).all()
    assert ranks["compute_s"].mean() == pytest.approx(llama_sim.compute_s, rel=1e-12)
    kinds = llama_sim.layer_kinds
    assert isinstance(kinds, pandas.DataFrame)
    assert kinds.to_dict("records") == d["compute_breakdown"]["per_microbatch"]
    assert len(llama_sim.routing_layers) == 0  # a dense model has no MoE layers


def test_tables_are_lists_without_pandas(llama_sim, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("no pandas here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    assert llama_sim.ranks == llama_sim.to_dict()["ranks"]


def test_mode_is_sim_mode_for_the_call(llama):
    full = llama.simulate("full")
    assert full.mode == "full"
    assert without_wall_time(full.to_dict()) == without_wall_time(
        cli_json("simulate", LLAMA_8B, "--set", "sim.mode=full"))
    assert llama.overrides == {}
    with pytest.raises(stepsim.ConfigError, match="sim.mode"):
        llama.simulate("fastest")


def test_a_trace_is_written_whole(llama, scratch):
    path = scratch / "step.json"
    result = llama.simulate(trace=path, trace_ranks="0,16", trace_window="0:0.5")
    assert result.trace == str(path)
    assert os.listdir(scratch) == ["step.json"]  # no temporary file left
    trace = json.loads(path.read_text())
    cli_path = scratch / "cli.json"
    import subprocess
    subprocess.run([stepsim_binary(), "simulate", LLAMA_8B, "--quiet", "--trace", str(cli_path), "--trace-ranks",
                    "0,16", "--trace-window", "0:0.5"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    assert trace == json.loads(cli_path.read_text())


def test_trace_errors_come_before_the_replay(llama, scratch):
    with pytest.raises(stepsim.ConfigError, match=r"no/such/dir/t.json: cannot write there .*\(trace\)"):
        llama.simulate(trace=scratch / "no" / "such" / "dir" / "t.json")
    with pytest.raises(stepsim.ConfigError, match="trace"):
        llama.simulate(trace_ranks="0")
    with pytest.raises(stepsim.ConfigError, match="--trace-ranks"):
        llama.simulate(trace=scratch / "t.json", trace_ranks="zero")
    assert os.listdir(scratch) == []


# Llama 3.1 8B cut to 4 layers and 64 sequences: a replay of a fraction of a second.
SMALL = {"model.num_hidden_layers": 4, "train.global_batch": 64, "parallel.microbatches": 4}


def copy_inputs(scratch):
    """A config in `scratch` whose model card (model.config_json) is beside it; their bytes."""
    (scratch / "m.json").write_bytes((ROOT / "workloads/models/llama-3.1-8b.config.json").read_bytes())
    text = (ROOT / LLAMA_8B).read_text()
    assert "models/llama-3.1-8b.config.json" in text
    (scratch / "cfg.yaml").write_text(text.replace("models/llama-3.1-8b.config.json", "m.json"))
    return {name: (scratch / name).read_bytes() for name in ("cfg.yaml", "m.json")}


def test_a_trace_never_replaces_an_input_of_the_plan(scratch, monkeypatch):
    before = copy_inputs(scratch)
    plan = stepsim.load(scratch / "cfg.yaml", SMALL)
    os.symlink("cfg.yaml", scratch / "link.yaml")
    clash = "trace is also an input of this command"
    for target, what in (("cfg.yaml", "config"), ("m.json", "model.config_json"), ("link.yaml", "config")):
        with pytest.raises(stepsim.ConfigError, match=f"{target}: {clash} \\({what}, "):
            plan.simulate(trace=scratch / target)
    monkeypatch.chdir(scratch)  # the same files by relative names, from another folder than the plan's
    for target in ("./cfg.yaml", "m.json"):
        with pytest.raises(stepsim.ConfigError, match=clash):
            plan.simulate(trace=target)
    # A dict config's model card (read against the folder it was loaded in), a model card given as
    # an override.
    as_dict = stepsim.load({"model": {"config_json": "m.json", "num_hidden_layers": 4},
                            "train": {"global_batch": 64, "seq_len": 8192}, "parallel": {"pp": 4, "microbatches": 4},
                            "schedule": "1f1b", "hardware": {"preset": "h800"}, "cluster": {"nodes": 8, "gpus_per_node": 8}})
    monkeypatch.chdir(ROOT)
    with pytest.raises(stepsim.ConfigError, match="model.config_json"):
        as_dict.simulate(trace=scratch / "m.json")
    other_card = scratch / "m2.json"
    other_card.write_bytes(before["m.json"])
    before["m2.json"] = before["m.json"]
    with pytest.raises(stepsim.ConfigError, match="model.config_json"):
        plan.with_({"model.config_json": str(other_card)}).simulate(trace=other_card)
    assert {name: (scratch / name).read_bytes() for name in before} == before
    assert sorted(os.listdir(scratch)) == ["cfg.yaml", "link.yaml", "m.json", "m2.json"]  # no temporary file left
    # Any other file is written.
    assert plan.simulate(trace=scratch / "t.json").trace == str(scratch / "t.json")
    assert json.loads((scratch / "t.json").read_text())["traceEvents"]


def test_a_trace_to_stdout_is_refused(llama, scratch, monkeypatch):
    monkeypatch.chdir(scratch)
    with pytest.raises(stepsim.ConfigError, match=r"^trace -: a Python call writes its trace to a file.*\./-"):
        llama.simulate(trace="-")
    assert os.listdir(scratch) == []


def test_progress_reaches_the_callback_and_ends_at_one(llama):
    seen = []
    result = llama.simulate(progress=seen.append)
    assert seen, "no progress update"
    assert all(isinstance(p, stepsim.Progress) for p in seen)
    last = seen[-1]
    assert last.share == 1.0 and last.eta_s == 0.0
    # The last update is the end of the replay: the step's simulated time, every op.
    assert last.simulated_s == pytest.approx(result.step_time_s, rel=1e-9)
    assert last.ops_done > 0
    assert [p.wall_s for p in seen] == sorted(p.wall_s for p in seen)


def test_an_exception_in_the_callback_stops_the_replay(llama):
    def fail(progress):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        llama.simulate(progress=fail)


def test_progress_true_prints_the_command_lines_line(scratch):
    import subprocess
    import sys
    code = ("import stepsim; stepsim.load('workloads/llama-3.1-8b.yaml', **{'sim.mode': 'full'})"
            ".simulate(progress=True)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, check=True)
    assert out.stdout == ""
    # Short replays print no line; a long one's lines come on stderr only ("stepsim: simulated ...").
    assert all(line.startswith("stepsim: ") for line in out.stderr.splitlines())


def test_a_config_error_in_the_replays_process_is_a_config_error(scratch):
    # A load file is read in the replay's process, before any replay: a bad one is the command
    # line's one line, raised as ConfigError.
    bad = scratch / "loads.csv"
    bad.write_text("not,a,load\ntable\n")
    sets = {"scenario.routing": "file", "scenario.load_file": str(bad)}
    with pytest.raises(stepsim.ConfigError) as e:
        stepsim.load(None, sets).simulate()
    theirs = cli_error("simulate", "--quiet", *[a for k, v in sets.items() for a in ("--set", f"{k}={v}")])
    assert "stepsim: error: " + str(e.value) == theirs
    assert str(bad) in str(e.value)
