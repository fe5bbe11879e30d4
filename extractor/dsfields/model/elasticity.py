"""DeepSpeed's elastic batch computation (``deepspeed/elasticity``), for a world rule that no probe can see.

``DeepSpeedConfig`` calls ``compute_elastic_config(config, version, world_size=N)`` when ``elasticity.enabled``
is true: ``ElasticityConfig`` refuses micro batches that are not positive integers, GPU bounds below 1, a version
newer than the runtime's, and the computation then refuses a world size N outside the valid GPU counts it derives
(DeepSpeed's own unit tests: world size 128 refused and 16 accepted for the same config). The probes set one key
at a time at world size 1, so they never reach that computation with a world; this module repeats it, read in
0.18.9's ``elasticity/elasticity.py`` and ``elasticity/config.py`` (the same code from 0.3.8 to 0.19.3), so
``check --world-size N`` can judge it (:mod:`dsfields.launch.world_rules`, confirmed by launch in world.json).

Absent keys take the release's own defaults, handed in by the caller from the snapshot (never restated here).
Only the standard library.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:  # lookup's start-up imports no typing; annotations are strings
    from typing import Any

HCN_LIST = (1, 2, 4, 6, 12, 24, 36, 48, 60, 120, 180, 240, 360, 720, 840, 1260, 1680, 2520, 5040, 7560, 10080, 15120,
            20160, 25200, 27720, 45360, 50400, 55440, 83160, 110880, 166320, 221760, 277200, 332640, 498960, 554400,
            665280, 720720)
"""``elasticity.py``'s highly composite numbers (DeepSpeed's constant list, not a config default)."""
LATEST_VERSION = 0.2
"""``elasticity/constants.py``'s LATEST_ELASTICITY_VERSION (0.3.8 to 0.19.3)."""

_KEYS = ("max_train_batch_size", "micro_batch_sizes", "min_gpus", "max_gpus", "model_parallel_size",
         "num_gpus_per_node", "min_time", "version", "prefer_larger_batch")


class Refused(Exception):
    """What DeepSpeed raises, and the key of the elasticity section it is about."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def settings(section: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """``ElasticityConfig(section)`` for an enabled section: its values, ``defaults`` for the keys absent; raises
    :class:`Refused` where ElasticityConfig does."""
    values = {key: section[key] if key in section else defaults.get(key) for key in _KEYS}
    for key in ("max_train_batch_size", "micro_batch_sizes"):
        if key not in section:
            raise Refused(key, f"Elasticity config missing {key}")
    micro = values["micro_batch_sizes"]
    if not isinstance(micro, list):
        raise Refused("micro_batch_sizes", "Elasticity expected value of micro_batch_sizes to be a list of micro "
                                           "batches")
    if not all(isinstance(m, int) for m in micro):  # bool is an int to DeepSpeed too
        raise Refused("micro_batch_sizes", "Elasticity expected micro_batch_sizes to only contain a list of integers")
    if not all(m > 0 for m in micro):
        raise Refused("micro_batch_sizes", "Elasticity expected micro_batch_sizes to only contain positive integers")
    low, high = values["min_gpus"], values["max_gpus"]
    if low < 1 or high < 1:
        raise Refused("min_gpus" if low < 1 else "max_gpus", "Elasticity min/max gpus must be > 0")
    if high < low:
        raise Refused("min_gpus", "Elasticity min_gpus cannot be greater than max_gpus")
    if values["model_parallel_size"] < 1:
        raise Refused("model_parallel_size", "Model-Parallel size cannot be less than 1")
    if values["num_gpus_per_node"] < 1:
        raise Refused("num_gpus_per_node", "Number of GPUs per node cannot be less than 1")
    if values["min_time"] < 0:
        raise Refused("min_time", "Elasticity min time needs to be >= 0")
    return values


def _candidates(bases: list[int], most: int) -> list[int]:
    out = []
    for base in bases:
        if base >= most:
            out.append(base)
        else:
            value = most // base
            index = next((i for i, n in enumerate(HCN_LIST) if n > value), 0)  # np.argmax: 0 when none is larger
            out.append(HCN_LIST[index - 1] * base)
    return list(set(out))  # DeepSpeed iterates the set: the same order here (CPython hashes ints to themselves)


def _valid_gpus(batch: int, micro: list[int], low: int, high: int) -> list[int]:
    valid = []
    for m in micro:
        if batch % m == 0:
            most = batch // m
            if low <= most <= high:
                valid.append(most)
            for i in range(1, most // 2 + 1):
                if i > high:
                    break
                if i < low:
                    continue
                if most % i == 0:
                    valid.append(i)
    return sorted(set(valid))


def _v01(micro: list[int], most: int, low: int | None, high: int | None, larger: bool) -> tuple[int, list[int]]:
    low = low or 1
    high = high or most // min(micro)
    if not all(m <= most for m in micro):
        raise Refused("micro_batch_sizes", f"All micro batches must be less than or equal to "
                                           f"max_acceptable_batch_size: {most}")
    bases = [*micro, math.lcm(*micro)]
    best, valid, final = 0, None, int(min(micro))
    for batch in _candidates(bases, most):
        current = _valid_gpus(batch, micro, low, high)
        if len(current) > best or (len(current) == best and ((larger and batch > final)
                                                               or (not larger and batch < final))):
            best, valid, final = len(current), current, batch
    return final, valid or []


def valid_world_sizes(values: dict[str, Any], world: int) -> list[int]:
    """The GPU counts ``compute_elastic_config`` accepts for ``values`` (:func:`settings`) at ``world`` ranks;
    raises :class:`Refused` where it refuses whatever the world."""
    version = float(values["version"])
    parallel, per_node = values["model_parallel_size"], values["num_gpus_per_node"]
    if parallel > 1 and version != 0.2:
        raise Refused("model_parallel_size", f"Elasticity V{values['version']} does not support model-parallel "
                                             "training")
    if version > LATEST_VERSION:
        raise Refused("version", f"Attempting to run elasticity version {values['version']} but runtime only "
                                 f"supports up to {LATEST_VERSION}")
    micro, most, larger = values["micro_batch_sizes"], values["max_train_batch_size"], values["prefer_larger_batch"]
    if version == 0.1:
        return _v01(micro, most, values["min_gpus"], values["max_gpus"], larger)[1]
    if version != 0.2:
        raise Refused("version", f"Unable to find elastic logic for version: {values['version']}")
    if per_node % parallel:
        raise Refused("num_gpus_per_node", f"In Elasticity v0.2, number of GPUs per node:{per_node} should be "
                                           f"divisible by model parallel size {parallel}")
    dp_per_node = per_node // parallel
    _, nodes = _v01(micro, int(most / dp_per_node), int(values["min_gpus"] / per_node),
                    int(values["max_gpus"] / per_node), larger)
    valid = [i * dp_per_node for i in nodes]
    if world // parallel in valid:
        return valid
    return [int((world / per_node) * dp_per_node)]


def world_refusal(section: Any, world: int, defaults: dict[str, Any]) -> tuple[str, str] | None:
    """(key, DeepSpeed's words) where an enabled elasticity section is refused at ``world`` ranks, else None."""
    if not isinstance(section, dict) or section.get("enabled", defaults.get("enabled")) is not True:
        return None
    try:
        valid = valid_world_sizes(settings(section, defaults), world)
    except Refused as exc:
        return exc.key, str(exc)
    except (TypeError, ValueError, ArithmeticError):
        return None  # a value DeepSpeed would fail on otherwise (a string min_gpus): the static check's
    if world not in valid:
        return "max_train_batch_size", (f"World size ({world}) is not valid with the current list of valid GPU "
                                        f"counts: {valid}")
    return None
