"""stepsim: simulate one distributed LLM training step, with its speed-of-light roofline beside it.

    import stepsim
    plan = stepsim.load("workloads/llama-3.1-8b.yaml", {"parallel.tp": 2})
    print(plan.roofline().step_time_s, plan.simulate().step_time_s)

The same library, schema, checks and reports as the ``stepsim`` command: ``load`` reads a config
(file or dict) with --set-style overrides, ``Plan.with_`` makes variants, ``import_megatron`` and
``import_torchtitan`` read other tools' jobs; ``Plan.roofline()``, ``Plan.memory()`` and
``Plan.simulate()`` answer with typed results whose ``to_dict()`` is the command line's --json;
``Plan.export_megatron()`` and ``Plan.export_torchtitan()`` write the job that runs a plan, and
``search`` finds the fastest plan (``stepsim search``).
Bad input raises ConfigError with the command line's one-line message. See docs/python.md.
"""

from __future__ import annotations

import signal as _signal
import threading as _threading

from . import _core
from ._plan import Plan, import_megatron, import_torchtitan, load
from ._results import MemoryEstimate, Progress, Roofline, SimulatedMemory, Simulation
from ._search import SearchResult, search

__version__: str = _core.version

ConfigError = _core.ConfigError
ConfigError.__module__ = __name__
ConfigError.__doc__ = ("A config, override or argument stepsim refuses; the message names the file or key, "
                       "what is wrong and the fix (the line the command line prints before exiting with code 2).")
SimulationError = _core.SimulationError
SimulationError.__module__ = __name__
SimulationError.__doc__ = "A replay that failed (its process died, or the engine stopped with an error)."


def interrupt() -> None:
    """Stops every simulation running in this process, in any thread: each raises KeyboardInterrupt.
    Ctrl-C does this already where Python's default SIGINT handler was in place when stepsim was
    imported; call it yourself where another handler runs (a notebook's, say) to stop a pool's replays."""
    _core.interrupt_all()


def _chain_sigint() -> None:
    # Ctrl-C raises KeyboardInterrupt in the main thread only; replays waiting in a thread pool's
    # workers would run on (and the pool's shutdown wait for them). Chained to the default handler,
    # Ctrl-C also stops those. Any other handler (the user's, a notebook's) is left alone.
    if _threading.current_thread() is not _threading.main_thread():
        return
    if _signal.getsignal(_signal.SIGINT) is not _signal.default_int_handler:
        return

    def _on_sigint(signum, frame):  # type: ignore[no-untyped-def]
        _core.interrupt_all()
        _signal.default_int_handler(signum, frame)

    _signal.signal(_signal.SIGINT, _on_sigint)


_chain_sigint()

__all__ = [
    "ConfigError",
    "MemoryEstimate",
    "Plan",
    "Progress",
    "Roofline",
    "SearchResult",
    "SimulatedMemory",
    "Simulation",
    "SimulationError",
    "import_megatron",
    "import_torchtitan",
    "interrupt",
    "load",
    "search",
]
