"""Plans: loading, variants, imports, and the three questions a plan answers (roofline, memory,
simulate). Every call goes to the C++ library the command line runs; nothing is computed here."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from typing import Any, Callable, Optional, Union

from . import _core
from ._results import MemoryEstimate, Progress, Roofline, Simulation
from ._values import config_text, override_texts

ConfigError = _core.ConfigError

PathLike = Union[str, "os.PathLike[str]"]

# How a dict config is named in messages and in the reports' `config` field.
_DICT_SOURCE = "config dict"

# The program a replay runs in (python/binding/replay_main.cpp), built beside the compiled module.
_REPLAY = os.path.join(os.path.dirname(_core.__file__), "_replay")


def _path_arg(path: Any, what: str) -> bytes:
    """A path as the bytes the C++ side opens (any bytes a Linux file name may hold)."""
    if isinstance(path, (str, bytes)) or hasattr(path, "__fspath__"):
        return os.fsencode(path)
    raise TypeError(f"{what}: expected a path (str or os.PathLike), got {type(path).__name__}")


def _merged(overrides: Optional[Mapping[str, Any]], more: Mapping[str, Any]) -> dict:
    if overrides is not None and not isinstance(overrides, Mapping):
        raise TypeError(f"overrides: expected a dict of dotted keys, got {type(overrides).__name__}")
    merged = dict(overrides or {})
    merged.update(more)
    return merged


class Plan:
    """A validated plan: model, training, parallelism, hardware, cluster, scenario and simulation
    options, checked as the command line checks a config. Immutable: ``with_`` makes variants.
    Picklable (a process pool's workers load it again)."""

    __slots__ = ("_handle", "_config", "_overrides", "_texts", "_import_notes", "_cwd")

    def __init__(self) -> None:
        raise TypeError("make a Plan with stepsim.load(), stepsim.import_megatron() or stepsim.import_torchtitan()")

    # _config is ("file", path, text) -- a config file, with the text it held when first loaded (or
    # None: read it now) -- or ("text", yaml, source, base_dir): a dict's or an import's YAML. _cwd is
    # the folder it was loaded in, against which relative paths were read (its replays run there).
    @classmethod
    def _load(cls, config: tuple, overrides: dict, import_notes: tuple = ()) -> "Plan":
        texts = override_texts(overrides)
        if config[0] == "file":
            if config[2] is None:
                handle, text = _core.load_file(config[1], texts)
                config = ("file", config[1], text)
            else:
                handle = _core.load_file_text(config[2], config[1], texts)
        else:
            handle = _core.load_text(config[1], config[2], texts, config[3])
        plan = object.__new__(cls)
        plan._handle = handle
        plan._config = config
        plan._overrides = copy.deepcopy(overrides)  # a list the caller changes later changes nothing here
        plan._texts = texts  # the --set texts the plan was loaded with, for its replays
        plan._import_notes = tuple(import_notes)
        plan._cwd = os.getcwd()
        return plan

    def with_(self, overrides: Optional[Mapping[str, Any]] = None, /, **more: Any) -> "Plan":
        """A variant of this plan: its overrides, then these (a key given again takes the new value).
        ``plan.with_({"parallel.tp": 4})``, ``plan.with_(**{"parallel.pp": 8})`` or
        ``plan.with_(parallel={"tp": 4, "pp": 8})``. Raises ConfigError as load() does."""
        merged = dict(self._overrides)
        merged.update(_merged(overrides, more))
        return Plan._load(self._config, merged, self._import_notes)

    # --- the three questions ---

    def roofline(self) -> Roofline:
        """The speed-of-light step in closed form (``stepsim roofline --json``); milliseconds."""
        return Roofline(json.loads(_core.roofline_json(self._handle)))

    def memory(self) -> MemoryEstimate:
        """The static memory estimate of the busiest pipeline rank (the ``memory`` object of
        ``stepsim roofline --json``); milliseconds, no replay."""
        return self.roofline().memory

    def simulate(self, mode: Optional[str] = None, *, trace: Optional[PathLike] = None,
                 trace_ranks: Optional[str] = None, trace_window: Optional[str] = None,
                 progress: Union[None, bool, Callable[[Progress], Any]] = None) -> Simulation:
        """Replays the step in SimGrid (``stepsim simulate --json``).

        mode: sim.mode for this call ("auto", "reduced" or "full"; None keeps the plan's).
        trace: write a Chrome/Perfetto trace there (written to a temporary file, renamed when complete).
        trace_ranks, trace_window: the GPUs ("0-7,64") and the seconds ("1.0:2.5") the trace holds.
        progress: a callable given a Progress about once a second and once at the end; True prints the
        command line's progress line on stderr instead.

        The replay runs in a process of its own while this thread waits without the GIL, so
        several plans run in parallel from a thread pool. Ctrl-C (or stepsim.interrupt()) ends it
        and raises KeyboardInterrupt, leaving no process and no file behind. Raises ConfigError for
        a bad argument or a plan too large to replay, SimulationError if the replay fails."""
        plan = self if mode is None else self.with_({"sim.mode": mode})
        callback = None
        if callable(progress):
            def callback(simulated_s: float, ops_done: int, share: Optional[float], eta_s: Optional[float],
                         wall_s: float) -> None:
                progress(Progress(simulated_s, ops_done, share, eta_s, wall_s))
        elif progress not in (None, False, True):
            raise TypeError(f"progress: expected a callable, True or None, got {type(progress).__name__}")
        trace_bytes = _path_arg(trace, "trace") if trace is not None else b""
        config = plan._config
        from_file = config[0] == "file"
        text = _core.simulate_json(
            plan._handle, _REPLAY, plan._cwd, from_file, config[2] if from_file else config[1], config[1] if from_file
            else config[2], "" if from_file else config[3], plan._texts, trace_bytes,
            _option(trace_ranks, "trace_ranks"), _option(trace_window, "trace_window"), progress is True, callback)
        return Simulation(json.loads(text), os.fsdecode(trace_bytes) if trace is not None else None)

    # --- the job that runs it ---

    def export_megatron(self) -> str:
        """The Megatron-LM launch script that runs this plan (torchrun and every cost-relevant
        argument): the text ``stepsim export megatron`` writes, checked by importing it back.
        Raises ConfigError, with the command line's line, for a plan Megatron-LM cannot express."""
        return _core.export_text(self._handle, "megatron")

    def export_torchtitan(self) -> str:
        """The torchtitan job TOML that runs this plan: the text ``stepsim export torchtitan``
        writes, checked by importing it back. Raises ConfigError, with the command line's line,
        for a plan torchtitan cannot express (ZeRO-1/2, a schedule it lacks, ...)."""
        return _core.export_text(self._handle, "torchtitan")

    # --- what the plan is ---

    @property
    def source(self) -> str:
        """The config file (or "config dict", or the imported file) it came from."""
        return self._handle.source

    @property
    def overrides(self) -> dict:
        """The overrides given, by dotted key, in order."""
        return copy.deepcopy(self._overrides)

    @property
    def notes(self) -> list:
        """Settings a hardware preset or profile held that the config or an override replaced."""
        return list(self._handle.notes)

    @property
    def import_notes(self) -> list:
        """For an imported plan: what was not imported, and why (``stepsim import``'s notes)."""
        return list(self._import_notes)

    @property
    def yaml(self) -> Optional[str]:
        """For an imported plan: the commented plan ``stepsim import`` writes (save it to reuse it)."""
        return self._config[1] if self._config[0] == "text" and self._config[2] != _DICT_SOURCE else None

    @property
    def model_name(self) -> str:
        return self._handle.model_name

    @property
    def hardware_name(self) -> str:
        return self._handle.hardware_name

    @property
    def memory_GiB(self) -> float:
        """HBM per GPU."""
        return self._handle.memory_GiB

    @property
    def gpus(self) -> int:
        return self._handle.gpus

    @property
    def nodes(self) -> int:
        return self._handle.nodes

    @property
    def gpus_per_node(self) -> int:
        return self._handle.gpus_per_node

    @property
    def tp(self) -> int:
        return self._handle.tp

    @property
    def pp(self) -> int:
        return self._handle.pp

    @property
    def cp(self) -> int:
        return self._handle.cp

    @property
    def ep(self) -> int:
        return self._handle.ep

    @property
    def dp(self) -> int:
        """Data-parallel replicas of the model."""
        return self._handle.dp

    @property
    def zero(self) -> int:
        """ZeRO stage: 1, 2, or 3 (FSDP)."""
        return self._handle.zero

    @property
    def microbatches(self) -> int:
        """Microbatches per pipeline per step."""
        return self._handle.microbatches

    @property
    def sequences_per_microbatch(self) -> float:
        return self._handle.sequences_per_microbatch

    @property
    def schedule(self) -> str:
        return self._handle.schedule

    @property
    def global_batch(self) -> int:
        """Sequences per step."""
        return self._handle.global_batch

    @property
    def seq_len(self) -> int:
        return self._handle.seq_len

    @property
    def tokens_per_step(self) -> int:
        return self._handle.tokens_per_step

    def __repr__(self) -> str:
        return (f"<stepsim.Plan {self.model_name} on {self.gpus} {self.hardware_name}: TP {self.tp}, PP {self.pp}, "
                f"CP {self.cp}, EP {self.ep}, DP {self.dp}, {self.microbatches} microbatches, {self.schedule} "
                f"({self.source})>")

    def __reduce__(self) -> tuple:
        # A process pool's worker loads it again from the same text; a relative config path is made
        # absolute there if that process works in another folder.
        config = self._config
        if config[0] == "file" and not os.path.isabs(config[1]):
            config = ("file", config[1], config[2], os.fsencode(self._cwd))
        return (_restore, (config, self._overrides, self._import_notes))


def _restore(config: tuple, overrides: dict, import_notes: tuple) -> Plan:
    if config[0] == "file" and len(config) == 4:
        path, text, cwd = config[1], config[2], config[3]
        config = ("file", path if os.fsencode(os.getcwd()) == cwd else os.path.join(cwd, path), text)
    return Plan._load(config, overrides, import_notes)


def _option(value: Optional[str], what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{what}: expected a str, got {type(value).__name__}")
    return value


def load(config: Union[None, PathLike, Mapping[str, Any]] = None, /,
         overrides: Optional[Mapping[str, Any]] = None, **more: Any) -> Plan:
    """Loads a plan as ``stepsim simulate CONFIG --set k=v ...`` does.

    config: a YAML config file (the shipped ones are in workloads/), a dict of the same sections
    (``{"model": {...}, "train": {...}, ...}``; relative paths in it are read against the current
    folder), or None for the default config (DeepSeek-V3 on 2048 H800s).
    overrides, **more: values by dotted key, as --set gives them: ``load(path, {"parallel.tp": 8})``,
    ``load(path, **{"parallel.tp": 8})`` or a whole section merged key by key,
    ``load(path, parallel={"tp": 8})``.

    Raises ConfigError (a ValueError) with the one line the command line would print: the file or
    key, what is wrong and the fix."""
    merged = _merged(overrides, more)
    if config is None:
        return Plan._load(("file", os.fsencode(_core.default_config_path()), None), merged)
    if isinstance(config, Mapping):
        return Plan._load(("text", config_text(config, _DICT_SOURCE), _DICT_SOURCE, os.getcwd()), merged)
    return Plan._load(("file", _path_arg(config, "config"), None), merged)


def _count(value: Optional[int], what: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{what}={value!r}: give {what} as an int")
    return str(value)


def _import(tool: str, path: PathLike, gpus: Optional[int], gpus_per_node: Optional[int],
            hardware: Optional[str]) -> Plan:
    if hardware is not None and not isinstance(hardware, str):
        raise ConfigError(f"hardware={hardware!r}: give a preset's name as a str")
    file = _path_arg(path, "path")
    yaml, notes = _core.import_yaml(tool, file, _count(gpus, "gpus"), _count(gpus_per_node, "gpus_per_node"),
                                    hardware or "")
    return Plan._load(("text", yaml, os.fsdecode(file), ""), {}, notes)


def import_megatron(path: PathLike, *, gpus: Optional[int] = None, gpus_per_node: Optional[int] = None,
                    hardware: Optional[str] = None) -> Plan:
    """A Megatron-LM launch script (or argument list) as a plan, as ``stepsim import megatron``
    reads it (nothing in it is run). gpus: the world size (default: the script's torchrun);
    gpus_per_node: default torchrun's --nproc-per-node, else 8; hardware: the GPU preset (default
    h100-sxm). The plan's ``yaml`` is the commented plan; ``import_notes`` what was not imported."""
    return _import("megatron", path, gpus, gpus_per_node, hardware)


def import_torchtitan(path: PathLike, gpus: int, *, gpus_per_node: Optional[int] = None,
                      hardware: Optional[str] = None) -> Plan:
    """A torchtitan job TOML as a plan on `gpus` GPUs, as ``stepsim import torchtitan`` reads it.
    gpus_per_node: default 8; hardware: the GPU preset (default h100-sxm)."""
    return _import("torchtitan", path, gpus, gpus_per_node, hardware)
