"""docs/python.md's worked example runs as written: the block marked `example: llama-3.1-70b-sweep`,
run by itself in a private folder that sees the checkout's workloads/ (the model path in it is
relative to the checkout's root), prints its choice and draws its figure."""

import os
import re
import subprocess
import sys

from conftest import ROOT

MARK = "<!-- example: llama-3.1-70b-sweep"


def example_code() -> str:
    text = (ROOT / "docs" / "python.md").read_text()
    after = text[text.index(MARK):]
    return re.search(r"```python\n(.*?)```", after, re.S).group(1)


def test_the_sweep_example_runs_as_written(scratch):
    (scratch / "workloads").symlink_to(ROOT / "workloads")
    (scratch / "example.py").write_text(example_code())
    out = subprocess.run([sys.executable, "example.py"], cwd=scratch, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 1 + 12 + 1  # the table's header, its 12 plans, the choice
    choice = re.fullmatch(r"fastest plan that fits in 72 GiB per GPU: TP (\d+), PP (\d+), micro-batch (\d+): "
                          r"([\d.]+) s per step, ([\d.]+) GiB at its peak", lines[-1])
    assert choice, lines[-1]
    # The choice is the fastest of the printed table's rows that fit (columns: tp, pp, micro_batch,
    # dp, microbatches, step_time_s, peak_GiB, mfu, fits), and fitting is peak <= 0.9 x 80 GiB.
    rows = [line.split() for line in lines[1:-1]]
    assert all((r[8] == "True") == (float(r[6]) <= 72) for r in rows)
    fastest = min((r for r in rows if r[8] == "True"), key=lambda r: float(r[5]))
    assert fastest[:3] == [choice.group(1), choice.group(2), choice.group(3)]
    assert float(choice.group(5)) <= 72
    figure = scratch / "llama-3.1-70b-sweep.png"
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
