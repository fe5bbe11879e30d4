"""Extraction: the only part of dsfields that imports DeepSpeed (and so torch and pydantic).

Install with ``pip install dsfields[extract]``. Everything else reads the snapshots written here.
"""
