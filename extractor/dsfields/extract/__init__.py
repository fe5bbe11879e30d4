"""Extraction: the only part of dsfields that imports DeepSpeed (and so torch and pydantic).

May import: anything (DeepSpeed, torch, pydantic, griffe, transformers) and ``dsfields.model``; never
the consumers (lookup, diff, check, schema, docs) nor the cli. Install with ``pip install
dsfields[extract]``. Everything else reads the snapshots written here.
"""
