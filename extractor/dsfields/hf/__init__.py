"""The HF Trainer and accelerate domain: what they do to a ds_config before DeepSpeed sees it, per release.

Pure Python over the committed ``generated/hf/`` snapshots (no transformers, accelerate or torch is imported):

- :mod:`dsfields.hf.arguments`: the Trainer's command-line arguments as the user gives them (``--trainer-args``),
  the HF snapshots' loading and the pairs of releases.
- :mod:`dsfields.hf.pair_rules`: the rules and extracted programs of one transformers / accelerate pair, evaluated.
- :mod:`dsfields.hf.trainer`: the simulation: the ``"auto"`` fills and what the Trainer and accelerate hand
  ``deepspeed.initialize`` (:func:`~dsfields.hf.trainer.trainer_run`, :func:`~dsfields.hf.trainer.hf_plan`).

It imports the standard library and :mod:`dsfields.model` only. Their readers (what reads transformers' and
accelerate's source into those snapshots) are the snapshot factory's:
:mod:`dsfields.extract.hf`.
"""
