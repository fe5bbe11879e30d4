"""The batch rule, written once: ``train_batch_size = micro batch × gradient accumulation × world size``.

DeepSpeed completes the three batch keys from the ones a config gives and then asserts that they multiply out
(``DeepSpeedConfig._set_batch_related_parameters`` and ``_batch_assertion`` in ``deepspeed/runtime/config.py``,
the same in every release from 0.8.0 on). ``check`` (the batch rule and its world sizes), ``resolve`` (the derived
values), the HF Trainer's plans (one rank) and the site's batch calculator (``docs/assets/batch-calculator.js``,
tested against :func:`complete` and :func:`refusal`) all ask this module.
"""

from __future__ import annotations

from dsfields.model.jsontypes import clone_json

TYPE_CHECKING = False
if TYPE_CHECKING:  # importing typing costs start-up milliseconds; annotations are strings anyway
    from typing import Any

BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")
NEITHER = "Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided"
"""DeepSpeed's own words when neither the batch nor the micro batch is given."""


def complete(tbs: int | None, micro: int | None, gas: int | None, world: int) -> tuple[int, int, int] | None:
    """The three values DeepSpeed ends with, computed from those given as it does, in its own statements (so that a
    string left in a key fails in the operation DeepSpeed's fails in: :func:`unfilled_auto_error`); None if neither
    the batch nor the micro batch is given (DeepSpeed refuses with :data:`NEITHER`)."""
    if tbs is not None and micro is not None and gas is not None:
        return tbs, micro, gas
    if tbs is not None and micro is not None:
        gas = tbs // micro
        gas //= world
        return tbs, micro, gas
    if tbs is not None and gas is not None:
        micro = tbs // world
        micro //= gas
        return tbs, micro, gas
    if micro is not None and gas is not None:
        tbs = micro * gas
        tbs *= world
        return tbs, micro, gas
    if tbs is not None:
        return tbs, tbs // world, 1
    if micro is not None:
        return micro * world, micro, 1
    return None


def refusal(tbs: int | None, micro: int | None, gas: int | None, world: int) -> str | None:
    """Why DeepSpeed refuses these batch values at ``world`` ranks; None if it accepts them."""
    values = complete(tbs, micro, gas, world)
    if values is None:
        return NEITHER
    for name, value in zip(BATCH_KEYS, values, strict=True):
        if value <= 0:
            return f"{name} resolves to {show(value)} at world size {world}; it has to be greater than 0"
    tbs, micro, gas = values
    if tbs != micro * gas * world:
        return (f"train_batch_size {show(tbs)} != {show(micro)} (micro) * {show(gas)} (accumulation) * "
                f"{world} (world size)")
    return None


def assertion(tbs: int, micro: int, gas: int, world: int) -> tuple[str, str] | None:
    """DeepSpeedConfig._batch_assertion (runtime/config.py:590) on a complete triple: the key it fails on and its
    AssertionError's words, in its order (each size greater than 0, then the product); None if it passes."""
    for key, value, words in (("train_batch_size", tbs, "Train batch size"),
                              ("train_micro_batch_size_per_gpu", micro, "Micro batch size per gpu"),
                              ("gradient_accumulation_steps", gas, "Gradient accumulation steps")):
        if value <= 0:
            return key, f"{words}: {show(value)} has to be greater than 0"
    if tbs != micro * gas * world:
        return "train_batch_size", ("Check batch related parameters. train_batch_size is not equal to "
                                    "micro_batch_per_gpu * gradient_acc_step * world_size "
                                    f"{show(tbs)} != {show(micro)} * {show(gas)} * {world}")
    return None


def at_one_rank(config: dict[str, Any], *, only_a_multiple: bool = False) -> dict[str, Any]:
    """``config`` with its batch triple made consistent at world size 1, where a launch outside a cluster runs.

    Only when all three are positive whole numbers: ``train_batch_size`` becomes micro × accumulation (a config
    right for N ranks then launches on one). With ``only_a_multiple``, a triple that fits no world size
    (``train_batch_size`` not a multiple of micro × accumulation) is left for DeepSpeed to refuse.
    """
    out = clone_json(config)
    values = [out.get(k) for k in BATCH_KEYS]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and integral(v) for v in values):
        tbs, micro, gas = (int(v) for v in values)
        if not only_a_multiple or tbs % (micro * gas) == 0:
            out["train_batch_size"] = micro * gas
    return out


def unfilled_auto_error(tbs: Any, micro: Any, gas: Any, world: int = 1) -> str | None:
    """The error DeepSpeed alone raises when some of the three keys keep an unfilled ``"auto"`` (a string), or None.

    It runs DeepSpeed's completion and assertions (``_set_batch_related_parameters``, then ``_batch_assertion``) with
    the same Python operations on the same values, so the error is the one the combination meets first: with all
    three ``"auto"`` (template A) the completion returns early and ``train_batch > 0`` fails; with the micro batch and
    accumulation ``"auto"`` and no batch size (template C) their product fails; a lone ``"auto"`` beside numbers fails
    in the division or the comparison that first touches it. The wording is Python's, the same in every release."""
    try:
        values = complete(tbs, micro, gas, world)
        if values is None:
            return None
        for value in values:
            if not value > 0:
                return None  # a number DeepSpeed refuses by assertion: not a string's error
        tbs, micro, gas = values
        _ = tbs == micro * gas * world
    except TypeError as exc:
        return f"TypeError: {exc}"
    return None


def integral(value: int | float) -> bool:
    """``value`` is a whole number; ints of any size never go through float (which overflows)."""
    return isinstance(value, int) or value.is_integer()


def show(n: int) -> str:
    """``n`` in a message: a product of two 4000-digit values is past what ``str(int)`` may print."""
    return str(n) if n.bit_length() < 14_000 else f"a number of about {round(n.bit_length() * 0.30103)} digits"
