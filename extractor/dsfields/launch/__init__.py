"""The user-run launch: ``deepspeed.initialize`` on this CPU machine, as ``check --launch`` and the witnesses run it.

Its public face, light to import (no DeepSpeed, no torch):

- :mod:`dsfields.launch.catalogue`: the launch rules, what ``deepspeed.initialize`` (and the HF Trainer before it)
  refuse, read from each release's ``launch.json``;
- :mod:`dsfields.launch.paths`: every path a config names, redirected into the launch's own folder;
- :mod:`dsfields.launch.client`: a launch worker's client (:class:`~dsfields.launch.client.LaunchClient`);
- :mod:`dsfields.launch.verdict`: what one launch did with one config.

Its internals run in the worker process and import DeepSpeed there: :mod:`~dsfields.launch.worker`,
:mod:`~dsfields.launch.launcher`, :mod:`~dsfields.launch.reset`, :mod:`~dsfields.launch.ops` (the CPU ops, built
once), :mod:`~dsfields.launch.quickcxx` (their compiler), :mod:`~dsfields.launch.process_tree` and
:mod:`~dsfields.launch.forked`. ``python -m dsfields.launch`` runs a launch from the command line.
"""
