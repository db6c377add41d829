"""Several plans at once from concurrent.futures pools give what they give one at a time. (That the
replays of a thread pool really run at the same time, the GIL released, test_interrupt.py shows:
both are caught paused inside their replays at once.)"""

import concurrent.futures
import json

import stepsim
from conftest import ROOT, without_wall_time

BASE = "workloads/llama-3.1-8b.yaml"
VARIANTS = [{"parallel.pp": pp, "parallel.tp": tp} for pp, tp in ((4, 1), (2, 2), (8, 1), (4, 2))]


def simulate(plan: stepsim.Plan) -> dict:
    return without_wall_time(plan.simulate().to_dict())


def test_thread_and_process_pools_match_one_at_a_time():
    base = stepsim.load(BASE)
    plans = [base.with_(v) for v in VARIANTS]
    one_by_one = [simulate(p) for p in plans]
    assert len({r["step_time_s"] for r in one_by_one}) == len(plans)  # four different plans
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(simulate, plans)) == one_by_one
    with concurrent.futures.ProcessPoolExecutor(2) as pool:  # the plans travel pickled
        assert list(pool.map(simulate, plans)) == one_by_one


def test_one_plan_from_many_threads():
    plan = stepsim.load(BASE)
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda _: simulate(plan), range(3)))
    assert results[0] == results[1] == results[2]


def test_calls_on_other_threads_are_not_checked_against_this_calls_files(scratch):
    # While this call's replay runs (its trace claimed as this call's output), a load on another
    # thread reads that very file: a command of its own, so not refused as if it were this call's
    # input (each call has its own record of files; one shared record refused it).
    config = scratch / "cfg.yaml"
    config.write_text((ROOT / BASE).read_text().replace("config_json: models/", f"config_json: {ROOT}/workloads/models/"))
    small = {"model.num_hidden_layers": 4, "train.global_batch": 64, "parallel.microbatches": 4}
    plan = stepsim.load(BASE, small)
    loaded = []

    def load_elsewhere(_):
        if not loaded:
            with concurrent.futures.ThreadPoolExecutor(1) as other:
                loaded.append(other.submit(lambda: stepsim.load(config).pp).exception() or "loaded")

    plan.simulate(trace=config, progress=load_elsewhere)
    assert loaded == ["loaded"]
    assert json.loads(config.read_text())["traceEvents"]  # the trace replaced it afterwards
