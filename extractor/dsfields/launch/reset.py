"""Putting back what ``deepspeed.initialize`` leaves in DeepSpeed's modules, so many launches share one process.

The launch worker (:class:`dsfields.launch.launcher.Launcher`) runs config after config; without this, one
launch's groups, modes and loggers change the next one's verdict. :func:`module_state` fingerprints the same
globals, for finding new leaks (``bench/launch_corpus.py --leaks``).
"""

from __future__ import annotations

import copy
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# What DeepSpeed 0.19.8 keeps between deepspeed.initialize calls in one process, found by diffing every
# deepspeed.* module global before and after each launch of the shared corpus and its mutations
# (bench/launch_corpus.py --leaks) and by running the corpus forwards and backwards (--order-check):
#   utils/groups.py           _ZERO_PARAM_INTRA_PARALLEL_GROUP (hpZ), _EXPERT_PARALLEL_GROUP{,_RANKS} /
#                             _EXPERT_DATA_PARALLEL_GROUP{,_RANKS} (dicts filled in place), _WORLD_GROUP,
#                             _DATA_PARALLEL_GROUP, mpu, mesh_device: a ZeRO-3 config with
#                             zero_hpz_partition_size > 1 and no optimizer fails with AttributeError
#                             (engine.py:2719) in a fresh process but launches after a config that
#                             created the hpZ group;
#   module_inject/layers.py   DEEPSPEED_AUTOTP_MODE, set by initialize() for tensor_parallel.autotp_size;
#   runtime/zero/partition_parameters.py  zero_init_context / top_level_context when initialize() raises
#                             between shutdown_init_context() and restore_init_context();
#   comm/comm.py              comms_logger, configured from the config's comms_logger section;
#   runtime/python_gc.py      python_gc_manager, whose engine count disable_python_gc raises;
#   torch.distributed         the subgroups DeepSpeed created (hpZ, expert, sequence parallel):
#                             destroyed after each launch (Launcher._clean_up).
# Rather than a list that goes stale with each release, every global of every deepspeed.* module is put
# back after each launch: rebound to the object it held after the warm-up launch, and containers
# (dict / list / set) refilled with the items they held then. Modules first imported during a launch
# are captured after it (their import-time state plus that one launch).
_LEAKED_OBJECTS: tuple[tuple[str, str], ...] = (
    ("deepspeed.comm.comm", "comms_logger"),
    ("deepspeed.runtime.python_gc", "python_gc_manager"),
)
_CONTAINERS = (dict, list, set)


def _data_globals(module: Any) -> Iterator[tuple[str, Any]]:
    import types

    for key, value in list(vars(module).items()):
        if key.startswith("__") or isinstance(value, (types.ModuleType, type, types.FunctionType,
                                                      types.BuiltinFunctionType, logging.Logger)):
            continue
        yield key, value


@dataclass
class ModuleGlobals:
    """Every ``deepspeed.*`` module global as it was, and attribute dicts of :data:`_LEAKED_OBJECTS`."""

    values: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)
    """module name -> global -> (object, shallow copy of its items if a container)."""
    objects: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def capture(cls) -> ModuleGlobals:
        state = cls()
        state._capture_new()
        for module, name in _LEAKED_OBJECTS:
            obj = getattr(sys.modules.get(module), name, None)
            if obj is not None:
                state.objects[(module, name)] = {k: copy.copy(v) for k, v in vars(obj).items()
                                                 if not k.startswith("_lock")}
        return state

    def _capture_new(self) -> None:
        for name, module in list(sys.modules.items()):
            if module is None or name in self.values or not (name == "deepspeed" or name.startswith("deepspeed.")):
                continue
            self.values[name] = {key: (value, copy.copy(value) if type(value) in _CONTAINERS else None)
                                 for key, value in _data_globals(module)}

    def restore(self) -> None:
        for name, saved in self.values.items():
            module = sys.modules.get(name)
            if module is None:
                continue
            for key, (value, items) in saved.items():
                if vars(module).get(key, _UNSET) is not value:
                    setattr(module, key, value)
                if items is not None and not _same_items(value, items):
                    value.clear()
                    value.update(items) if isinstance(value, (dict, set)) else value.extend(items)
        for (module, name), attributes in self.objects.items():
            obj = getattr(sys.modules[module], name)
            for key, value in attributes.items():
                setattr(obj, key, copy.copy(value))
        self._capture_new()


_UNSET: Any = object()


def _same_items(now: Any, then: Any) -> bool:
    """Identity of items, never ``==`` on them (tensors compare elementwise)."""
    if len(now) != len(then):
        return False
    if isinstance(now, dict):
        return all(key in now and now[key] is value for key, value in then.items())
    if isinstance(now, list):
        return all(a is b for a, b in zip(now, then, strict=True))
    return {id(x) for x in now} == {id(x) for x in then}


def module_state(prefix: str = "deepspeed") -> dict[str, str]:
    """Fingerprint of every ``prefix.*`` module global that is data (not a module, class or function).

    For finding leaks: diff it before and after a launch (bench/launch_corpus.py --leaks).
    """
    state: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        if not (name == prefix or name.startswith(prefix + ".")) or module is None:
            continue
        for key, value in _data_globals(module):
            try:
                text = repr(value) if isinstance(value, (int, float, str, bool, tuple, type(None))) else (
                    f"{type(value).__name__}#{id(value)}:{len(value) if hasattr(value, '__len__') else ''}")
            except Exception:
                text = f"{type(value).__name__}#{id(value)}"
            state[f"{name}:{key}"] = text[:200]
    return state

