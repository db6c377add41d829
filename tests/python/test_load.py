"""stepsim.load, Plan.with_ and the plan's description: the same schema, checks and one-line errors
as the command line, raised as stepsim.ConfigError."""

import math
import pickle

import pytest

import stepsim
from conftest import ROOT, cli_error, cli_json

LLAMA_8B = "workloads/llama-3.1-8b.yaml"


def test_load_a_shipped_config_describes_its_plan():
    plan = stepsim.load(LLAMA_8B)
    # workloads/llama-3.1-8b.yaml: 8 nodes x 8 GPUs, PP 4, TP 1 -> 16 replicas; 512 x 8192 tokens.
    assert (plan.nodes, plan.gpus_per_node, plan.gpus) == (8, 8, 64)
    assert (plan.tp, plan.pp, plan.cp, plan.ep, plan.dp) == (1, 4, 1, 1, 16)
    assert plan.microbatches == 32
    assert plan.sequences_per_microbatch == 512 / 16 / 32
    assert (plan.global_batch, plan.seq_len, plan.tokens_per_step) == (512, 8192, 512 * 8192)
    assert plan.schedule == "1f1b"
    assert plan.zero == 1
    assert plan.model_name == "Llama-3.1-8B"
    assert plan.hardware_name == "H800"
    assert plan.memory_GiB == 80
    assert plan.source == LLAMA_8B
    assert plan.overrides == {}
    assert plan.notes == []
    assert "Llama-3.1-8B" in repr(plan) and "PP 4" in repr(plan)


def test_load_without_a_config_is_the_default_deepseek_plan():
    plan = stepsim.load()
    assert plan.gpus == 2048
    assert plan.schedule == "dualpipev"
    assert plan.source.endswith("workloads/deepseek-v3.yaml")


def test_overrides_by_dotted_key_in_every_form():
    by_dict = stepsim.load(LLAMA_8B, {"parallel.tp": 2, "parallel.pp": 2})
    by_keywords = stepsim.load(LLAMA_8B, **{"parallel.tp": 2, "parallel.pp": 2})
    by_section = stepsim.load(LLAMA_8B, parallel={"tp": 2, "pp": 2})
    for plan in (by_dict, by_keywords, by_section):
        assert (plan.tp, plan.pp, plan.dp) == (2, 2, 16)  # 64 / (2 x 2)
    assert by_dict.overrides == {"parallel.tp": 2, "parallel.pp": 2}


def test_with_makes_a_variant_and_leaves_the_plan_alone():
    plan = stepsim.load(LLAMA_8B, {"parallel.tp": 2})
    variant = plan.with_({"parallel.pp": 8}, **{"parallel.tp": 4})
    assert (plan.tp, plan.pp) == (2, 4)
    assert (variant.tp, variant.pp, variant.dp) == (4, 8, 2)
    assert variant.overrides == {"parallel.tp": 4, "parallel.pp": 8}
    assert variant.source == plan.source


# workloads/llama-3.1-8b.yaml restated as a dict (its model path from the checkout's root).
LLAMA_8B_DICT = {
    "model": {"config_json": "workloads/models/llama-3.1-8b.config.json", "name": "Llama-3.1-8B"},
    "train": {"global_batch": 512, "seq_len": 8192},
    "parallel": {"pp": 4, "ep": 1, "microbatches": 32, "zero": 1},
    "schedule": "1f1b",
    "hardware": {"preset": "h800"},
    "cluster": {"nodes": 8, "gpus_per_node": 8},
    "scenario": {"routing": "balanced", "seed": 1, "routing_samples": 200000},
    "sim": {"mode": "auto"},
}


def llama_dict_with(section, value):
    """The dict with one section replaced or added."""
    config = dict(LLAMA_8B_DICT)
    config[section] = value
    return config


def test_a_dict_config_loads_like_the_file_it_restates():
    config = LLAMA_8B_DICT
    from_dict = stepsim.load(config).roofline().to_dict()
    from_file = stepsim.load(LLAMA_8B).roofline().to_dict()
    assert from_dict["config"] == "config dict"
    for report in (from_dict, from_file):
        del report["config"]
    assert from_dict == from_file


def test_overrides_reach_the_reports_as_the_command_line_gives_them():
    plan = stepsim.load(LLAMA_8B, {"parallel.tp": 2, "hardware.preset": "h100-sxm", "scenario.seed": 7})
    assert plan.roofline().to_dict()["sets"] == ["parallel.tp=2", "hardware.preset=h100-sxm", "scenario.seed=7"]
    assert plan.roofline().to_dict() == cli_json("roofline", LLAMA_8B, "--set", "parallel.tp=2", "--set",
                                                 "hardware.preset=h100-sxm", "--set", "scenario.seed=7")


def test_a_plan_pickles_and_loads_again():
    plan = stepsim.load(LLAMA_8B, {"parallel.tp": 2})
    again = pickle.loads(pickle.dumps(plan))
    assert again.overrides == plan.overrides and again.tp == 2
    assert again.roofline() == plan.roofline()
    from_dict = stepsim.load({"model": {"config_json": "workloads/models/llama-3.1-8b.config.json"},
                              "train": {"global_batch": 64, "seq_len": 4096},
                              "cluster": {"nodes": 1, "gpus_per_node": 8},
                              "parallel": {"pp": 2, "microbatches": 8}, "schedule": "1f1b",
                              "hardware": {"preset": "h100-sxm"}})
    assert pickle.loads(pickle.dumps(from_dict)).roofline() == from_dict.roofline()


def test_plans_are_made_by_load_only():
    with pytest.raises(TypeError, match="stepsim.load"):
        stepsim.Plan()


# --- errors: the command line's one line, as ConfigError ---


def message(call) -> str:
    with pytest.raises(stepsim.ConfigError) as e:
        call()
    text = str(e.value)
    assert "\n" not in text
    return text


def test_config_error_is_a_value_error_named_in_the_package():
    assert issubclass(stepsim.ConfigError, ValueError)
    assert stepsim.ConfigError.__module__ == "stepsim"


def test_an_override_error_reads_as_the_command_lines():
    ours = message(lambda: stepsim.load(LLAMA_8B, {"parallel.tp": 3}))
    theirs = cli_error("roofline", LLAMA_8B, "--set", "parallel.tp=3")
    assert theirs == "stepsim: error: " + ours


def test_an_unknown_key_is_named_with_the_fix():
    text = message(lambda: stepsim.load(LLAMA_8B, {"parallel.tensor_model_parallel_size": 2}))
    assert "parallel.tensor_model_parallel_size" in text and "parallel.tp" in text
    assert text == cli_error("roofline", LLAMA_8B, "--set", "parallel.tensor_model_parallel_size=2")[
        len("stepsim: error: "):]


def test_a_missing_file_is_named():
    text = message(lambda: stepsim.load("workloads/no-such-plan.yaml"))
    assert "workloads/no-such-plan.yaml" in text


@pytest.mark.parametrize(
    "overrides, named",
    [
        ({"parallel.tp": "eight"}, "parallel.tp"),  # wrong type
        ({"parallel.tp": 2.5}, "parallel.tp"),
        ({"parallel.tp": True}, "parallel.tp"),
        ({"parallel.tp": None}, "parallel.tp"),
        ({"parallel.tp": [8]}, "parallel.tp"),
        ({"parallel.tp": {"x": 1}}, "parallel.tp"),
        ({"parallel.tp": math.nan}, "parallel.tp"),  # NaN
        ({"hardware.memory_GiB": math.nan}, "hardware.memory_GiB"),
        ({"hardware.memory_GiB": math.inf}, "hardware.memory_GiB"),
        ({"hardware.memory_GiB": -math.inf}, "hardware.memory_GiB"),
        ({"parallel.tp": 10**30}, "parallel.tp"),  # huge numbers
        ({"parallel.tp": 2**63}, "parallel.tp"),
        ({"parallel.tp": -(2**63) - 1}, "parallel.tp"),
        ({"train.global_batch": 10**4000}, "train.global_batch"),
        ({"hardware.memory_GiB": 1e308}, "hardware.memory_GiB"),
        ({"parallel.no_such_key": 1}, "parallel.no_such_key"),  # unknown keys
        ({"nosection.key": 1}, "nosection"),
        ({"parallel": {"tp": {"deeper": [1, {"still": None}]}}}, "parallel.tp"),  # nested garbage
        ({"parallel.tp": b"8"}, "parallel.tp"),  # bytes
        ({"model.name": "\udcff"}, "model.name"),  # a lone surrogate (undecodable bytes)
        ({"parallel": {1: 2}}, "parallel"),  # non-str keys
        ({"parallel": {None: 2}}, "parallel"),
        ({"parallel.tp": object()}, "parallel.tp"),
        ({"parallel.tp": {1, 2}}, "parallel.tp"),
        ({"parallel.tp": 1 + 2j}, "parallel.tp"),
        ({"": 1}, "''"),
        ({"parallel.tp=2": 1}, "parallel.tp=2"),
        ({"parallel..tp": 1}, "parallel..tp"),
        ({"scenario.stragglers": [{"gpu": 1, "clock": 0.5}] * 100_000}, "--set scenario.stragglers: 2,600,020 bytes"),
    ],
)
def test_hostile_overrides_raise_config_error_naming_the_key(overrides, named):
    assert named in message(lambda: stepsim.load(LLAMA_8B, overrides))


def test_non_str_override_keys_are_refused():
    with pytest.raises(stepsim.ConfigError, match="not a str"):
        stepsim.load(LLAMA_8B, {1: 2})
    with pytest.raises(stepsim.ConfigError, match="not a str"):
        stepsim.load(LLAMA_8B, {("parallel", "tp"): 2})


def nested(depth):
    value = 1
    for _ in range(depth):
        value = {"x": value}
    return value


def cyclic():
    d = {}
    d["parallel"] = d
    return d


@pytest.mark.parametrize(
    "config, named",
    [
        (llama_dict_with("parallel", {"pp": 4, "tp": "two"}), "parallel.tp"),  # wrong types
        (llama_dict_with("parallel", "tp"), "parallel"),
        (llama_dict_with("cluster", {"nodes": b"8", "gpus_per_node": 8}), "cluster.nodes"),
        (llama_dict_with("no_such_section", {}), "no_such_section"),  # unknown keys
        (llama_dict_with("train", {"global_batch": math.nan, "seq_len": 8192}), "train.global_batch"),  # NaN
        (llama_dict_with("train", {"global_batch": 512, "seq_len": 10**25}), "train.seq_len"),  # huge
        (llama_dict_with("hardware", {"preset": "h800", "memory_GiB": -math.inf}), "hardware.memory_GiB"),
        (llama_dict_with("parallel", {"pp": 4, "tp": [[[[[]]]]]}), "parallel.tp"),  # nested garbage
        (llama_dict_with("hardware", {"preset": "h800", "memory_GiB": 1e308}), "hardware.memory_GiB"),  # huge
        (llama_dict_with("parallel", {"pp": 2**64}), "parallel.pp"),
        (llama_dict_with("train", {"global_batch": 10**5000, "seq_len": 8192}), "train.global_batch"),
        (llama_dict_with("schedule", math.inf), "schedule"),  # inf
        (llama_dict_with("model", {"config_json": "workloads/models/llama-3.1-8b.config.json", "name": "\udcff\udcfe"}), "model.name"),  # non-UTF-8
        (llama_dict_with("parallel", {"pp": 4, "\udcff": 1}), "lone surrogate"),
        (llama_dict_with("model", {"config_json": "a\udcffb.json"}), "model.config_json"),
        (llama_dict_with("model", {"config_json": "workloads/models/llama-3.1-8b.config.json", "name": "a\nparallel: {tp: 8}"}), "model.name"),  # a line break
        # Too much to be a config: refused by its size, at once, as a file over 1 MiB is (the parser
        # spent 10 s on it and then blamed the syntax).
        (llama_dict_with("scenario", {"stragglers": [{"gpu": 1, "clock": 0.5}] * 100_000}), "more than the 1 MiB"),
        ({**LLAMA_8B_DICT, 1: {"tp": 2}}, "not a str"),  # non-str keys
        (llama_dict_with("parallel", {"pp": 4, (1, 2): 3}), "not a str"),
        (nested(200), "nested"),
        (cyclic(), "nested"),
        ({}, "config dict"),
        (llama_dict_with("model", {"config_json": "no/such/config.json"}), "no/such/config.json"),
    ],
)
def test_hostile_dict_configs_raise_config_error(config, named):
    assert named in message(lambda: stepsim.load(config))


def test_wrong_argument_types_are_type_errors():
    with pytest.raises(TypeError):
        stepsim.load(42)
    with pytest.raises(TypeError):
        stepsim.load(LLAMA_8B, ["parallel.tp=2"])


def test_a_path_object_and_a_non_utf8_file_name(scratch):
    import os
    plan = stepsim.load(ROOT / LLAMA_8B)
    assert plan.gpus == 64
    bad = os.fsdecode(bytes(scratch) + b"/\xff\xfe.yaml")
    text = message(lambda: stepsim.load(bad))
    assert "\\xff\\xfe.yaml" in text  # the bytes shown, one line of valid text


def test_a_plan_is_what_was_loaded_even_if_its_file_changes(scratch):
    config = scratch / "plan.yaml"
    text = (ROOT / LLAMA_8B).read_text().replace("config_json: models/", f"config_json: {ROOT}/workloads/models/")
    config.write_text(text)
    plan = stepsim.load(config)
    loaded = plan.roofline().to_dict()
    config.write_text(text.replace("pp: 4 ", "pp: 2 ").replace("microbatches: 32", "microbatches: 16"))
    assert stepsim.load(config).pp == 2  # the file did change
    assert plan.with_({"scenario.seed": 2}).pp == 4
    replayed = plan.simulate().roofline  # the replay ran the plan as loaded
    assert replayed.plan == loaded["plan"] and replayed.step_time_s == loaded["step_time_s"]


def test_a_plan_loaded_by_a_relative_path_unpickles_in_another_folder(scratch, monkeypatch):
    plan = stepsim.load(LLAMA_8B)
    data = pickle.dumps(plan)
    monkeypatch.chdir(scratch)
    again = pickle.loads(data)
    assert again.source == str(ROOT / LLAMA_8B)
    ours, theirs = again.roofline().to_dict(), plan.roofline().to_dict()
    assert ours.pop("config") == str(ROOT / LLAMA_8B) and theirs.pop("config") == LLAMA_8B
    assert ours == theirs


def test_a_plan_keeps_its_overrides_as_they_were_when_loaded():
    # The caller's list, changed after loading, changes neither the plan, its variants nor its replays.
    stragglers = [{"gpu": 5, "clock": 0.8}]
    small = {"model.num_hidden_layers": 4, "train.global_batch": 64, "parallel.microbatches": 4}
    plan = stepsim.load(LLAMA_8B, {**small, "scenario.stragglers": stragglers})
    sets = plan.roofline().to_dict()["sets"]
    assert sets[-1] == 'scenario.stragglers=[{"gpu": 5, "clock": 0.8}]'
    stragglers[0]["clock"] = 0.5
    stragglers.append({"gpu": 6, "clock": 0.5})
    assert plan.overrides["scenario.stragglers"] == [{"gpu": 5, "clock": 0.8}]
    assert plan.with_({"scenario.seed": 2}).overrides["scenario.stragglers"] == [{"gpu": 5, "clock": 0.8}]
    assert plan.simulate().to_dict()["sets"] == sets
