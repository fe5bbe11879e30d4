"""Compatibility shim: names that old DeepSpeed releases import and today's torch/numpy removed.

Every DeepSpeed release is imported from its sdist in a *shared* environment with one modern torch
(2.13) and numpy (2.x) (see :mod:`dsfields.extract.releases`). Older releases import a few names that those
libraries have since removed, so ``import deepspeed`` would fail before any config code runs.
:func:`install` puts back exactly those names, with the value they had, and nothing else:

* it only ever **adds** a name that is missing: an existing attribute or module is never replaced,
  so releases (and libraries) that don't need a name see no difference;
* it never touches DeepSpeed itself (no DeepSpeed module is imported or patched), so the config code
  that dsfields extracts runs exactly as released.

:func:`install` must run before ``deepspeed`` is imported. ``dsfields.extract.releases.run_in_release`` arranges
that with a generated ``sitecustomize.py`` that loads this file by path (no package ``__init__`` runs
first) and records the returned names in ``$DSFIELDS_COMPAT_ADDED``. It is idempotent: a second call
finds nothing missing and returns ``[]``. It imports torch and numpy (which DeepSpeed imports anyway)
but no DeepSpeed module, and adds nothing when those libraries are absent.

This module must stay importable on its own: standard library only at import time.
"""

from __future__ import annotations

import importlib
import logging
import math
import sys
import types
from collections.abc import Callable

log = logging.getLogger(__name__)


def _import(name: str) -> types.ModuleType | None:
    """Import ``name``, or return None when it (or what it needs) isn't installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _add_attr(module: types.ModuleType, name: str, value: object, added: list[str]) -> None:
    """Set ``module.name = value`` only if ``module`` has no attribute ``name``."""
    if not hasattr(module, name):
        setattr(module, name, value)
        added.append(f"{module.__name__}.{name}")


def _numpy_bufsize(added: list[str]) -> None:
    """``numpy.BUFSIZE`` (8192, numpy's default ufunc buffer size; removed in numpy 2.0).

    Needed by DeepSpeed 0.8.0-0.14.3: ``deepspeed/autotuning/scheduler.py`` does ``from numpy import
    BUFSIZE`` (and uses it only as a file ``buffering=`` size), and ``import deepspeed`` imports the
    autotuner. 0.14.4 replaced it with its own constant.
    """
    numpy = _import("numpy")
    if numpy is not None:
        _add_attr(numpy, "BUFSIZE", 8192, added)


def _torch_six(added: list[str]) -> None:
    """The ``torch._six`` module with its ``inf`` (``math.inf``; the module was removed in torch 2.0).

    Needed by DeepSpeed 0.8.0 and 0.8.1, whose ``deepspeed/runtime/utils.py`` (and several optimizer
    modules) do ``from torch._six import inf`` unconditionally. Later releases try ``torch._six`` and
    fall back to ``from torch import inf`` -- the same ``math.inf`` -- so they are unaffected.
    DeepSpeed never imports anything else from ``torch._six``.
    """
    torch = _import("torch")
    if torch is None or "torch._six" in sys.modules or _import("torch._six") is not None:
        return
    six = types.ModuleType("torch._six", "Re-created by dsfields.extract.compat: torch<2.0's torch._six.")
    six.inf = math.inf  # type: ignore[attr-defined]
    sys.modules["torch._six"] = six
    added.append("torch._six")
    added.append("torch._six.inf")
    _add_attr(torch, "_six", six, [])


def _elastic_agent_api(added: list[str]) -> None:
    """``log`` and ``_get_socket_with_port`` in ``torch.distributed.elastic.agent.server.api``.

    Needed by DeepSpeed 0.8.0-0.14.3: ``deepspeed/elasticity/elastic_agent.py`` does ``from
    torch.distributed.elastic.agent.server.api import log, _get_socket_with_port`` (0.14.1-0.14.3
    import only ``_get_socket_with_port``), and ``import deepspeed`` imports it. torch 2.4 renamed the
    module logger ``log`` to ``logger`` and moved ``_get_socket_with_port`` to
    ``torch.distributed.elastic.utils.distributed.get_socket_with_port``; the names added are those
    very objects (the same logger, the same function).
    """
    api = _import("torch.distributed.elastic.agent.server.api")
    if api is None:
        return
    logger = getattr(api, "logger", None)
    _add_attr(api, "log", logger if logger is not None else logging.getLogger(api.__name__), added)
    distributed = _import("torch.distributed.elastic.utils.distributed")
    get_socket = getattr(distributed, "get_socket_with_port", None)
    if get_socket is not None:
        _add_attr(api, "_get_socket_with_port", get_socket, added)


_SHIMS: tuple[Callable[[list[str]], None], ...] = (_numpy_bufsize, _torch_six, _elastic_agent_api)


def install() -> list[str]:
    """Add every missing name listed above; return the dotted names added (``[]`` if none were missing).

    A shim that fails is logged and skipped, so one broken library can't hide the others' additions.
    """
    added: list[str] = []
    for shim in _SHIMS:
        try:
            shim(added)
        except Exception:
            log.warning("compat shim %s failed", shim.__name__, exc_info=True)
    if added:
        log.debug("compat shim added %s", ", ".join(added))
    return added
