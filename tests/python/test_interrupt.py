"""Ctrl-C stops a replay: KeyboardInterrupt, no process and no file left behind, whether the replay
runs in the main thread, a thread pool or a process pool. Each replay is caught at a point it
reaches itself (STEPSIM_TEST_PAUSE_IN_REPLAY: it says so on stderr and waits), never after a guessed delay."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

DRIVER = Path(__file__).with_name("interrupt_driver.py")
PAUSED = "paused for a signal"


def start(case: str, out_dir: Path) -> subprocess.Popen:
    env = dict(os.environ, STEPSIM_TEST_PAUSE_IN_REPLAY="1", PYTHONPATH=os.pathsep.join(
        [str(DRIVER.parent), os.environ.get("PYTHONPATH", "")]))
    # A session of its own: every process the driver starts (pool workers, replays) carries its id.
    return subprocess.Popen([sys.executable, str(DRIVER), case, str(out_dir)], cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def wait_until_paused(proc: subprocess.Popen, replays: int) -> list:
    lines = []
    while sum(PAUSED in line for line in lines) < replays:
        line = proc.stderr.readline()
        assert line, f"the driver ended before {replays} replays started: {''.join(lines)}"
        lines.append(line)
    return lines


def session_processes(sid: int) -> list:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # field 6, the session; zombies are gone already
            found.append(int(entry))
    return found


@pytest.mark.parametrize("case, replays", [("main", 1), ("threads", 2), ("processes", 2)])
def test_ctrl_c_raises_keyboard_interrupt_and_leaves_nothing(case, replays, scratch):
    proc = start(case, scratch)
    try:
        wait_until_paused(proc, replays)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert "KeyboardInterrupt" in err
    assert proc.returncode != 0
    assert session_processes(proc.pid) == []
    assert os.listdir(scratch) == []  # no trace and no temporary file


def test_interrupt_stops_a_replay_in_another_thread(scratch):
    proc = start("interrupt", scratch)
    try:
        wait_until_paused(proc, 1)
        out, err = proc.communicate("go\n", timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, err
    assert out.strip() == "KeyboardInterrupt"
    assert session_processes(proc.pid) == []
    assert os.listdir(scratch) == []
