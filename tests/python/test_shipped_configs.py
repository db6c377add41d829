"""simulate().to_dict() and roofline().to_dict() equal the command line's --json on every shipped
config (workloads/*.yaml), in the replay mode each ships with (reduced where it is exact)."""

from pathlib import Path

import pytest

import stepsim
from conftest import ROOT, cli_json, without_wall_time

CONFIGS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "workloads").glob("*.yaml"))


def test_every_shipped_config_is_here():
    assert "workloads/deepseek-v3.yaml" in CONFIGS and len(CONFIGS) >= 5


@pytest.mark.parametrize("config", CONFIGS)
def test_simulate_and_roofline_equal_the_command_line(config):
    plan = stepsim.load(config)
    assert plan.roofline().to_dict() == cli_json("roofline", config)
    ours = plan.simulate()
    theirs = cli_json("simulate", config)
    assert ours.step_time_s == theirs["step_time_s"]
    assert without_wall_time(ours.to_dict()) == without_wall_time(theirs)
