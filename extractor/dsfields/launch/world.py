"""The world a launch plays in: rank r of N ranks, G per node, in one CPU process (torch's fake process group).

Users launch on 8 to 1,024 ranks, and some refusals fire only there (the hpZ size against the world, the micro
batch of ``train_batch_size`` < N, an AutoTP mesh smaller than N on ranks outside it). One process can play any
rank of any world without editing DeepSpeed (issue 42):

* ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE`` and ``LOCAL_SIZE`` (the CPU accelerator's device count, i.e. ranks per
  node; ``LOCAL_WORLD_SIZE`` too) are set before DeepSpeed is imported;
* ``torch.distributed.init_process_group("fake", store=FakeStore(), rank=r, world_size=N)`` comes first, so
  DeepSpeed's ``init_distributed`` finds a group and skips its own set-up, and every group it builds is fake;
* DeepSpeed's CPU shared-memory allreduce op (``build_shm_op``) is made unavailable: it would wait for the
  other ranks' processes, which do not exist.

What the fake group cannot show is :data:`UNSEEN`: it is said beside every verdict, never guessed. This module
imports neither DeepSpeed nor torch at import (the client and ``check`` read :class:`World` without them).
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass

UNSEEN = ("the fake process group runs no collective (an all-reduce, broadcast or all-gather returns without data "
          "moving), so nothing that depends on values exchanged between ranks, on NCCL/CUDA-only paths, on the "
          "memory or time of N real ranks, or on a rank other than the one played is judged")
"""What a launch at world size N in one process cannot judge (said with its verdict)."""


@dataclass(frozen=True)
class World:
    """Rank ``rank`` of ``size`` ranks, ``gpus_per_node`` of them per node (the launcher's ``--num_gpus``)."""

    size: int
    rank: int = 0
    gpus_per_node: int | None = None
    """None: every rank on one node (``min(size, 8)`` is not assumed: ``LOCAL_SIZE`` = ``size``)."""

    def __post_init__(self) -> None:
        if self.size < 1 or not 0 <= self.rank < self.size:
            raise ValueError(f"rank {self.rank} is not in a world of {self.size}")
        if self.gpus_per_node is not None and self.gpus_per_node < 1:
            raise ValueError("gpus per node must be at least 1")

    @property
    def per_node(self) -> int:
        return min(self.gpus_per_node or self.size, self.size)

    @property
    def fake(self) -> bool:
        """More than one rank: played with torch's fake process group (one rank: a real gloo group of one)."""
        return self.size > 1

    def env(self) -> dict[str, str]:
        """The launcher's environment variables for this rank (set before ``import deepspeed``)."""
        local = str(self.per_node)
        env = {"RANK": str(self.rank), "LOCAL_RANK": str(self.rank % self.per_node), "WORLD_SIZE": str(self.size),
               "LOCAL_WORLD_SIZE": local}
        if self.fake:  # at one rank the CPU accelerator counts NUMA nodes, as every committed record was made
            env["LOCAL_SIZE"] = local
        return env

    def argv(self) -> list[str]:
        """The worker's command-line arguments for this world (``python -m dsfields.launch --jsonl``)."""
        out = ["--world-size", str(self.size), "--rank", str(self.rank)]
        if self.gpus_per_node is not None:
            out += ["--gpus-per-node", str(self.gpus_per_node)]
        return out

    def played(self) -> str:
        """How a verdict names the world (``rank 7 of 8, 8 per node``)."""
        return f"rank {self.rank} of {self.size}, {self.per_node} per node" if self.fake else "world size 1"

    def ranks_to_play(self) -> tuple[int, ...]:
        """Rank 0 and the last rank: some failures hit only ranks left outside a mesh (``device_mesh.py``)."""
        return (0, self.size - 1) if self.size > 1 else (0,)


def join_fake_group(world: World) -> None:
    """Make this process ``world``'s rank in torch's fake process group (torch imported here, DeepSpeed not yet
    set up); raise :class:`RuntimeError` where this torch has no fake group."""
    import torch.distributed as torch_dist

    try:
        from torch.testing._internal.distributed.fake_pg import FakeStore
    except ImportError as exc:  # torch before 2.1
        raise RuntimeError(f"this torch has no fake process group ({exc}): a launch at world size "
                           f"{world.size} needs torch >= 2.1") from exc
    if not torch_dist.is_initialized():
        torch_dist.init_process_group("fake", store=FakeStore(), rank=world.rank, world_size=world.size)


def disable_shm_allreduce() -> bool:
    """Make DeepSpeed's CPU shared-memory allreduce op unavailable (it waits for ranks that do not exist).

    ``deepspeed.comm.torch.build_shm_op`` (0.14 on) is looked up as a module global when the backend is built;
    ``import deepspeed.comm.torch as m`` would give torch itself (``deepspeed.comm`` imports torch), hence
    ``sys.modules``. True when there was one to disable."""
    with_op = importlib.import_module("deepspeed.comm.torch")
    module = sys.modules.get("deepspeed.comm.torch", with_op)
    if not hasattr(module, "build_shm_op"):
        return False
    module.build_shm_op = lambda: None
    return True


def apply_env(world: World) -> None:
    os.environ.update(world.env())
