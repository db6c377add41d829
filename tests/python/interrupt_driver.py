"""Run by test_interrupt.py in a child Python process (with STEPSIM_TEST_PAUSE_IN_REPLAY set, so
that each replay says so on stderr and waits once it has started): replays that the test then
interrupts. Usage: interrupt_driver.py CASE OUT_DIR."""

import concurrent.futures
import sys
import threading

import stepsim

PLAN = "workloads/llama-3.1-8b.yaml"


def replay(i: int) -> float:
    plan = stepsim.load(PLAN, {"scenario.seed": i + 1})
    return plan.simulate(trace=f"{sys.argv[2]}/trace{i}.json").step_time_s


def main() -> None:
    case = sys.argv[1]
    if case == "main":  # Ctrl-C while the main thread waits for its replay
        replay(0)
    elif case == "threads":  # Ctrl-C while a thread pool's workers wait for theirs
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            list(pool.map(replay, range(2)))
    elif case == "processes":  # Ctrl-C to a process pool (a terminal's reaches every process)
        with concurrent.futures.ProcessPoolExecutor(2) as pool:
            list(pool.map(replay, range(2)))
    elif case == "interrupt":  # stepsim.interrupt() from another thread, once the test says "go"
        outcome = []

        def worker():
            try:
                replay(0)
                outcome.append("finished")
            except KeyboardInterrupt:
                outcome.append("KeyboardInterrupt")

        t = threading.Thread(target=worker)
        t.start()
        sys.stdin.readline()
        stepsim.interrupt()
        t.join()
        print(outcome[0], flush=True)
    else:
        raise SystemExit(f"unknown case {case}")


if __name__ == "__main__":
    main()
