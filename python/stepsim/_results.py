"""Typed views of the command line's JSON reports.

Each result holds the very object ``stepsim roofline --json`` or ``stepsim simulate --json`` prints
(built by the same C++ code) and reads its fields from it: ``to_dict()`` is that object, and the
attributes are its keys with their units in their names (docs/output.md describes every key).
"""

from __future__ import annotations

import copy
from typing import Any, NamedTuple, Optional


def _table(rows: list, index: Optional[str] = None) -> Any:
    """Rows as a pandas DataFrame when pandas is installed, else as a list of dicts."""
    try:
        import pandas
    except ImportError:
        return copy.deepcopy(rows)
    frame = pandas.DataFrame(rows)
    if index is not None and index in frame.columns:
        frame = frame.set_index(index)
    return frame


class _Report:
    __slots__ = ("_data",)

    def __init__(self, data: dict) -> None:
        self._data = data

    def to_dict(self) -> dict:
        """The report as the command line prints it with --json (a copy)."""
        return copy.deepcopy(self._data)

    def _get(self, key: str) -> Any:
        return self._data.get(key)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._data == self._data  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


class MemoryEstimate(_Report):
    """The static memory estimate of a plan's busiest pipeline rank: the ``memory`` object of
    ``stepsim roofline --json`` (weights, gradients, optimizer state, buffers and the activations its
    schedule keeps in flight)."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        """The busiest pipeline rank."""
        return self._get("rank")

    @property
    def layers(self) -> int:
        """Transformer layers the rank holds."""
        return self._get("layers")

    @property
    def in_flight_microbatches(self) -> float:
        """Microbatches whose activations the rank keeps at its peak."""
        return self._get("in_flight_microbatches")

    @property
    def weights_bytes(self) -> float:
        return self._get("weights_bytes")

    @property
    def grads_bytes(self) -> float:
        return self._get("grads_bytes")

    @property
    def optimizer_bytes(self) -> float:
        return self._get("optimizer_bytes")

    @property
    def buffers_bytes(self) -> float:
        return self._get("buffers_bytes")

    @property
    def activations_bytes(self) -> float:
        return self._get("activations_bytes")

    @property
    def total_bytes(self) -> float:
        """Everything the rank holds at its peak."""
        return self._get("total_bytes")

    @property
    def capacity_bytes(self) -> float:
        """hardware.memory_GiB in bytes."""
        return self._get("capacity_bytes")

    @property
    def fits(self) -> bool:
        """Whether total_bytes fits in capacity_bytes."""
        return self._get("fits")

    def __repr__(self) -> str:
        return (f"MemoryEstimate(total_bytes={self.total_bytes:.4g}, capacity_bytes={self.capacity_bytes:.4g}, "
                f"fits={self.fits})")


class Roofline(_Report):
    """The speed-of-light step of a plan in closed form: ``stepsim roofline --json``."""

    __slots__ = ()

    @property
    def step_time_s(self) -> float:
        """max(compute_s, comm_s) + bubble_s: the step with perfect overlap."""
        return self._get("step_time_s")

    @property
    def compute_s(self) -> float:
        return self._get("compute_s")

    @property
    def comm_s(self) -> float:
        """All communication, assumed overlappable with compute."""
        return self._get("comm_s")

    @property
    def exposed_comm_s(self) -> float:
        return self._get("exposed_comm_s")

    @property
    def bubble_s(self) -> float:
        return self._get("bubble_s")

    @property
    def ep_comm_s(self) -> float:
        return self._get("ep_comm_s")

    @property
    def pp_comm_s(self) -> float:
        return self._get("pp_comm_s")

    @property
    def dp_comm_s(self) -> float:
        return self._get("dp_comm_s")

    @property
    def tp_comm_s(self) -> float:
        return self._get("tp_comm_s")

    @property
    def cp_comm_s(self) -> float:
        return self._get("cp_comm_s")

    @property
    def mfu(self) -> float:
        """Model FLOPs utilisation at the step time."""
        return self._get("mfu")

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self._get("tokens_per_s_per_gpu")

    @property
    def achieved_tflops_per_gpu(self) -> float:
        return self._get("achieved_tflops_per_gpu")

    @property
    def memory(self) -> MemoryEstimate:
        """The static memory estimate (as Plan.memory())."""
        return MemoryEstimate(self._data["memory"])

    @property
    def plan(self) -> dict:
        """The plan restated (GPUs, PP, stages, DP, EP, microbatches, tokens per step, ...)."""
        return copy.deepcopy(self._get("plan"))

    @property
    def assumed(self) -> dict:
        """The rates the closed forms assumed (TFLOP/s, GB/s, SMs)."""
        return copy.deepcopy(self._get("assumed"))

    def __repr__(self) -> str:
        return f"Roofline(step_time_s={self.step_time_s:.6g}, compute_s={self.compute_s:.6g}, mfu={self.mfu:.4g})"


class SimulatedMemory(_Report):
    """The highest per-GPU memory peak of a replayed step: the ``memory`` object of
    ``stepsim simulate --json``."""

    __slots__ = ()

    @property
    def peak_bytes(self) -> float:
        return self._get("peak_bytes")

    @property
    def peak_rank(self) -> int:
        """The GPU that peaks highest."""
        return self._get("peak_rank")

    @property
    def peak_t_s(self) -> float:
        """When it peaks, seconds into the step."""
        return self._get("peak_t_s")

    @property
    def capacity_bytes(self) -> float:
        """hardware.memory_GiB in bytes."""
        return self._get("capacity_bytes")

    @property
    def fits(self) -> bool:
        """Whether every simulated GPU's peak fits."""
        return self._get("fits")

    @property
    def ranks_over_capacity(self) -> int:
        return self._get("ranks_over_capacity")

    @property
    def breakdown(self) -> dict:
        """What the peak GPU holds at its peak: weights_bytes, grads_bytes, optimizer_bytes, ..."""
        return copy.deepcopy(self._get("breakdown"))

    def __repr__(self) -> str:
        return (f"SimulatedMemory(peak_bytes={self.peak_bytes:.4g}, peak_rank={self.peak_rank}, "
                f"capacity_bytes={self.capacity_bytes:.4g}, fits={self.fits})")


class Simulation(_Report):
    """A replayed step beside its roofline: ``stepsim simulate --json``."""

    __slots__ = ("_trace",)

    def __init__(self, data: dict, trace: Optional[str] = None) -> None:
        super().__init__(data)
        self._trace = trace

    @property
    def step_time_s(self) -> float:
        """End of the last op on any GPU."""
        return self._get("step_time_s")

    @property
    def compute_s(self) -> float:
        """Mean over the simulated GPUs of their compute stream's busy time."""
        return self._get("compute_s")

    @property
    def exposed_comm_s(self) -> float:
        """Mean time the compute stream waited for communication."""
        return self._get("exposed_comm_s")

    @property
    def bubble_s(self) -> float:
        """Mean rest of the idle time (the schedule, other stages)."""
        return self._get("bubble_s")

    @property
    def exposed_comm_share(self) -> float:
        return self._get("exposed_comm_share")

    @property
    def bubble_share_of_compute(self) -> float:
        return self._get("bubble_share_of_compute")

    @property
    def exposed_by_kind(self) -> dict:
        """Mean exposed time by what was awaited: ep_s, pp_s, dp_s, tp_s, cp_s, outside_fb_pairs_s."""
        return copy.deepcopy(self._get("exposed_by_kind"))

    @property
    def critical_rank(self) -> int:
        """The GPU with the most compute + exposed communication."""
        return self._get("critical_rank")

    @property
    def tokens_per_step(self) -> int:
        return self._get("tokens_per_step")

    @property
    def tokens_per_s_per_gpu(self) -> float:
        return self._get("tokens_per_s_per_gpu")

    @property
    def vs_roofline(self) -> float:
        """Simulated step / roofline step - 1."""
        return self._get("vs_roofline")

    @property
    def mfu(self) -> float:
        return self._get("mfu")

    @property
    def achieved_tflops_per_gpu(self) -> float:
        return self._get("achieved_tflops_per_gpu")

    @property
    def megatron_tflops_per_gpu(self) -> Optional[float]:
        """Throughput as Megatron-LM's logs count it (None for MLA models)."""
        return self._get("megatron_tflops_per_gpu")

    @property
    def explanation(self) -> str:
        """Where the simulation and the roofline differ, in words (empty within 2 %)."""
        return self._get("explanation")

    @property
    def roofline(self) -> Optional[Roofline]:
        """The roofline of the same plan (None for the synthetic workload)."""
        data = self._get("roofline")
        return Roofline(data) if data is not None else None

    @property
    def memory(self) -> Optional[SimulatedMemory]:
        """The step's memory peak (None without a memory model)."""
        data = self._get("memory")
        return SimulatedMemory(data) if data is not None else None

    @property
    def mode(self) -> str:
        """What was replayed: full, reduced, ep-group, ep-groups or straggler-groups."""
        return self._data["sim"]["mode"]

    @property
    def fidelity(self) -> str:
        """exact, or fast when flows that cannot set any time were left out."""
        return self._data["sim"]["fidelity"]

    @property
    def activities(self) -> int:
        """SimGrid activities the replay started."""
        return self._data["sim"]["activities"]

    @property
    def wall_s(self) -> float:
        """Wall seconds the replay took."""
        return self._data["sim"]["wall_s"]

    @property
    def trace(self) -> Optional[str]:
        """The Chrome/Perfetto trace written (simulate(trace=...)), else None."""
        return self._trace

    @property
    def ranks(self) -> Any:
        """Per simulated GPU (index: rank): step_time_s, compute_s, exposed_comm_s, bubble_s, the
        data-moving and exposed time of each communication class, memory_peak_bytes. A pandas
        DataFrame when pandas is installed, else a list of dicts."""
        return _table(self._data.get("ranks", []), index="rank")

    @property
    def layer_kinds(self) -> Any:
        """Per layer kind, one microbatch on the critical GPU: gemm_s, attention_s, memory_bound_s,
        launch_s, total_s, forward_s, input_grad_s, weight_grad_s (compute_breakdown.per_microbatch).
        A pandas DataFrame when pandas is installed, else a list of dicts."""
        breakdown = self._get("compute_breakdown") or {}
        return _table(breakdown.get("per_microbatch", []))

    @property
    def routing_layers(self) -> Any:
        """Per MoE layer: expert_max_over_mean, gpu_max_over_mean (routing.layers; empty for a dense
        model). A pandas DataFrame when pandas is installed, else a list of dicts."""
        routing = self._get("routing") or {}
        return _table(routing.get("layers", []), index="layer")

    def __repr__(self) -> str:
        return (f"Simulation(step_time_s={self.step_time_s:.6g}, compute_s={self.compute_s:.6g}, "
                f"exposed_comm_s={self.exposed_comm_s:.6g}, bubble_s={self.bubble_s:.6g}, mode={self.mode!r})")


class Progress(NamedTuple):
    """What a replay's progress line says, passed to simulate(progress=...) about once a second
    and once at the end (share 1.0)."""

    simulated_s: float
    """Simulated time reached since the step began."""
    ops_done: int
    share: Optional[float]
    """Share of the ops done, 0 to 1 (None when unknown)."""
    eta_s: Optional[float]
    """Wall seconds left (None when unknown)."""
    wall_s: float
    """Wall seconds since the replay began."""

