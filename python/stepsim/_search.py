"""stepsim.search(): the fastest plan for a model, cluster and batch, found by the command line's
``stepsim search`` (its four stages and its replays run in processes of that program, as they do
from a shell), read back from its directory. Nothing is searched here: this file only turns the
call into the command's arguments (a list, never a shell line) and its files into Python values."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from typing import Any, Optional, Union

from . import _core
from ._plan import Plan, PathLike, _path_arg, load
from ._results import _table
from ._values import override_texts

ConfigError = _core.ConfigError
SimulationError = _core.SimulationError

# The command line this module was built with (build/stepsim): its `search` runs the replays.
_CLI = _core.cli_program()

# A Plan made from text (a dict, an import) is searched from this file in the search directory:
# the command line reads configs from files, and a resumed search must name the same file again.
_TEXT_CONFIG = "config.yaml"


class SearchResult:
    """What ``stepsim search`` wrote into its directory: the ranked table (``search.csv``), the
    plans pruned before a replay (``pruned.csv``), the summary it printed (``summary.txt``) and the
    winner (``best.yaml``) as a Plan."""

    __slots__ = ("_out_dir", "_table", "_pruned", "_summary", "_best")

    def __init__(self) -> None:
        raise TypeError("stepsim.search() makes a SearchResult")

    @classmethod
    def _read(cls, out_dir: str) -> "SearchResult":
        result = object.__new__(cls)
        result._out_dir = out_dir
        result._table = _read_csv(os.path.join(out_dir, "search.csv"))
        result._pruned = _read_csv(os.path.join(out_dir, "pruned.csv"))
        with open(os.path.join(out_dir, "summary.txt"), encoding="utf-8", errors="replace") as f:
            result._summary = f.read()
        best = os.path.join(out_dir, "best.yaml")
        result._best = load(best) if os.path.exists(best) else None
        return result

    @property
    def out_dir(self) -> str:
        """The search directory (absolute)."""
        return self._out_dir

    @property
    def table(self) -> Any:
        """Every plan that passed validation, ranked as ``search.csv`` ranks them: replayed by step,
        then failed replays, then the rest by estimate, then those out of memory. One row per plan:
        the searched keys, status, step_time_s (the replay's; None unless replayed), estimate_step_s and
        the other columns of docs/search.md. A pandas DataFrame when pandas is installed, else a
        list of dicts; an empty cell is None (NaN in a DataFrame's column of numbers)."""
        return _frame(self._table)

    @property
    def pruned(self) -> Any:
        """Every plan pruned before a replay (``pruned.csv``): its keys, the stage ("1 validation",
        "2 memory"), the key and the reason. A DataFrame (or a list of dicts), as ``table``."""
        return _frame(self._pruned)

    @property
    def summary(self) -> str:
        """The summary the command prints (``summary.txt``): the stages, why the replays stopped, the
        config's own plan, the best, the top rows."""
        return self._summary

    @property
    def best(self) -> Optional[Plan]:
        """The fastest replayed plan that fits in memory, loaded from ``best.yaml``; None when no
        replayed plan fits (the command's exit status 1)."""
        return self._best

    def __repr__(self) -> str:
        best = "none fits" if self._best is None else repr(self._best)
        return f"<stepsim.SearchResult {len(self._table[1])} ranked, {len(self._pruned[1])} pruned, best: {best}>"


def _cell(text: str) -> Any:
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _read_csv(path: str) -> tuple:
    """(the header, the rows as dicts) of one of the search's CSV files."""
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        reader = csv.DictReader(f)
        rows = [{k: _cell(v) for k, v in row.items()} for row in reader]
        return list(reader.fieldnames or []), rows


def _frame(header_rows: tuple) -> Any:
    header, rows = header_rows
    if rows:
        return _table(rows)
    try:  # no row: the columns still name what a row would hold
        import pandas
    except ImportError:
        return []
    return pandas.DataFrame(columns=header)


def _word(value: Any, what: str) -> str:
    """A value as the command line's --only / --fix text takes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        text = str(value)
        if isinstance(value, str) and ("," in text or "\n" in text or "\r" in text):
            raise ConfigError(f"{what}={value!r}: a value holds a comma or a line break; give one value per list item")
        return text
    raise ConfigError(f"{what}={value!r}: give a str, int, float or bool")


def _keyed(values: Optional[Mapping[str, Any]], option: str, many: bool) -> list:
    if values is None:
        return []
    if not isinstance(values, Mapping):
        raise ConfigError(f"{option.lstrip('-')}: expected a dict of dotted keys, got {type(values).__name__}")
    args = []
    for key, value in values.items():
        if not isinstance(key, str):
            raise ConfigError(f"{option.lstrip('-')}: the key {key!r} is not a str; give dotted keys such as 'parallel.tp'")
        where = f"{option.lstrip('-')}[{key!r}]"
        if many and isinstance(value, (list, tuple)):
            if not value:
                raise ConfigError(f"{where}: the list is empty; give the values the key takes")
            text = ",".join(_word(v, where) for v in value)
        else:
            text = _word(value, where)
        args += [option, f"{key}={text}"]
    return args


def _number(value: Any, what: str, kind: type = int) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
        raise ConfigError(f"{what}={value!r}: give {what} as {'a number' if kind is float else 'an int'}")
    return repr(value) if kind is float else str(value)


def _error_line(stderr_lines: list) -> str:
    for line in reversed(stderr_lines):
        if line.startswith("stepsim: error: "):
            return line[len("stepsim: error: "):]
    return stderr_lines[-1] if stderr_lines else "no message"


def search(config: Union[None, PathLike, Plan] = None, /, overrides: Optional[Mapping[str, Any]] = None, *,
           out_dir: PathLike, gpus: Optional[int] = None, tokens_per_step: Optional[int] = None,
           global_batch: Optional[int] = None, only: Optional[Mapping[str, Any]] = None,
           fix: Optional[Mapping[str, Any]] = None, top: int = 10, jobs: Optional[int] = None,
           margin_pct: float = 10, max_replays: int = 32, max_plans: int = 50000,
           quiet: bool = True) -> SearchResult:
    """The fastest plan for a config's model, cluster and batch: ``stepsim search`` (docs/search.md),
    run as a process of the command line with these arguments, its directory read back.

    config: a config file, a Plan (its overrides are --set values: a key the search varies is fixed
    by them; a Plan made from a dict or an import is searched from ``out_dir/config.yaml``, written
    first, its relative paths made absolute) or None for the default config. overrides: --set
    values for every plan. gpus, tokens_per_step, global_batch: --gpus, --tokens-per-step,
    --global-batch. only: ``{"parallel.tp": [1, 2]}`` (--only), fix: ``{"parallel.recompute":
    "none"}`` (--fix). top, jobs (default: every core), margin_pct, max_replays, max_plans: as the
    command's options. quiet: False relays the search's progress to stderr.

    The same call again resumes in ``out_dir`` (finished replays are read back). Raises ConfigError
    with the command's one line for bad input, KeyboardInterrupt when Ctrl-C stops it (the finished
    replays stay in out_dir/points), SimulationError if the search itself fails. A search in which
    no replayed plan fits returns a result whose ``best`` is None."""
    out = os.path.abspath(os.fsdecode(_path_arg(out_dir, "out_dir")))
    cwd = os.getcwd()
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(f"overrides: expected a dict of dotted keys, got {type(overrides).__name__}")
    sets = override_texts(dict(overrides)) if overrides is not None else []
    written = None  # the text Plan's config file, when this call wrote it
    if isinstance(config, Plan):
        kind = config._config
        cwd = config._cwd  # its relative paths were read there, as its replays run there
        if kind[0] == "file":
            config_arg = os.fsdecode(kind[1])
        else:
            base = kind[3] or cwd
            text = _core.config_json(kind[1], os.path.join(base, _TEXT_CONFIG))
            config_arg = os.path.join(out, _TEXT_CONFIG)
            written = (config_arg, text)
        sets = list(config._texts) + sets
    elif config is None:
        config_arg = _core.default_config_path()
    else:
        config_arg = os.fsdecode(_path_arg(config, "config"))
    args = [_CLI, "search", config_arg]
    for s in sets:
        args += ["--set", s]
    for option, value in (("--gpus", gpus), ("--tokens-per-step", tokens_per_step), ("--global-batch", global_batch)):
        if value is not None:
            args += [option, _number(value, option.lstrip("-").replace("-", "_"))]
    args += _keyed(only, "--only", True) + _keyed(fix, "--fix", False)
    args += ["--top", _number(top, "top"), "--margin", _number(margin_pct, "margin_pct", float),
             "--max-replays", _number(max_replays, "max_replays"), "--max-plans", _number(max_plans, "max_plans"),
             "-o", out]
    if jobs is not None:
        args += ["-j", _number(jobs, "jobs")]
    if quiet:
        args.append("--quiet")

    made_dir = made_file = False
    if written is not None:
        path, text = written
        if not os.path.isdir(out):
            os.makedirs(out)
            made_dir = True
        made_file = not os.path.exists(path)
        tmp = path + ".stepsim-tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)

    lines = []
    child = subprocess.Popen(args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    try:
        assert child.stderr is not None
        for raw in child.stderr:
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            lines.append(line)
            del lines[:-20]
            if not quiet:
                sys.stderr.write(line + "\n")
        code = child.wait()
    except BaseException:
        # Ctrl-C reached the search too when it runs in this terminal; otherwise stop it here, as
        # Ctrl-C would (its replays stop with it and the finished ones stay in out_dir/points).
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
        child.wait()
        raise
    if code == 2:
        try:  # nothing of this call's left behind for refused input
            if made_file:
                os.remove(written[0])
            if made_dir:
                os.rmdir(out)
        except OSError:
            pass
        raise ConfigError(_error_line(lines))
    if code == 128 + signal.SIGINT:
        raise KeyboardInterrupt
    failed = any(line.startswith("stepsim: internal error: ") for line in lines)
    if code not in (0, 1) or failed or not os.path.exists(os.path.join(out, "summary.txt")):
        raise SimulationError(f"stepsim search exited with status {code}: {_error_line(lines)}")
    return SearchResult._read(out)
