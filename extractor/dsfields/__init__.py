"""dsfields: the source-derived dictionary of every DeepSpeed config field.

Extraction (``dsfields.extract``) needs DeepSpeed; everything else here reads committed
snapshots only and never imports DeepSpeed, torch or pydantic.
"""

__version__ = "0.1.0"
