"""The snapshot factory's readers of transformers and accelerate: their source read into ``generated/hf/``.

- :mod:`~dsfields.extract.hf.sources`: the few source files of a release, fetched once.
- :mod:`~dsfields.extract.hf.fills`: which ``"auto"`` values the Trainer fills.
- :mod:`~dsfields.extract.hf.flags`: the Trainer's command-line flags as ``HfArgumentParser`` builds them.
- :mod:`~dsfields.extract.hf.programs` and :mod:`~dsfields.extract.hf.rule_witness`: their functions as data.
- :mod:`~dsfields.extract.hf.trainer_witness`: the real Trainer, one step on CPU (the differential).

Part of the snapshot factory: may import what ``dsfields.extract`` may (it reads transformers' and accelerate's
source as text, and imports them only in the Trainer witness), and :mod:`dsfields.hf` below it.
"""
