"""How DeepSpeed's source names the ds_config: the names the static scan starts from and follows.

The scan (:mod:`.scan`) knows no field; it knows how DeepSpeed spells the dict that holds them: the
parameter names of the functions that receive it, the reader helpers that take a key and a default, the
class built from it, and the attribute names too common to follow from one class to another.
"""

from __future__ import annotations

import ast

SEED_PARAMS = frozenset({"param_dict", "ds_config", "ds_config_dict", "deepspeed_config"})
"""Parameter names taken to hold the whole ds_config when no caller says otherwise."""

READERS = frozenset({"get_scalar_param", "get_dict_param", "get_list_param"})
"""DeepSpeed's dict-reader helpers (``runtime/config_utils.py``): ``(d, KEY, DEFAULT)``."""

ROOT_CLASSES = frozenset({"DeepSpeedConfig"})
"""Classes whose ``__init__``'s first argument is the ds_config itself (a dict, or a path to one)."""

ENTRY_SEEDS: dict[tuple[str, str], tuple[str, ...]] = {("deepspeed", "initialize"): ("config",)}
"""Functions whose parameter holds the whole ds_config under a name no other reader uses:
``deepspeed.initialize(config=...)`` reads ``sequence_parallel_size`` and ``data_parallel_size``
(the mesh device) before ``DeepSpeedConfig`` exists, so neither the trace nor the scan of
``runtime/`` sees them."""

GENERIC_ATTRS = frozenset({"config", "_config", "params", "cfg", "args", "data", "kwargs", "param_dict", "dict"})
"""Attribute names too common to follow across classes (followed within their own class only)."""

_CONFIG_NAMES = frozenset({"_config", "config", "ds_config", "_ds_config", "config_params", "deepspeed_config"})


def names_the_config(node: ast.expr) -> bool:
    """``self._config``, ``engine.config``, ``ds_config``: an expression naming the DeepSpeedConfig object."""
    if isinstance(node, ast.Attribute):
        return node.attr in _CONFIG_NAMES
    return isinstance(node, ast.Name) and node.id in _CONFIG_NAMES


def constant_like(name: str) -> bool:
    """DeepSpeed spells its constants in upper case (``FP16``, ``ZERO_OPTIMIZATION_STAGE``)."""
    return name == name.upper()
