"""The model layer: typed snapshot records, loading and storing them, and what follows from snapshots alone.

May import: the standard library and ``dsfields.model.*``. Nothing above it (extract, consumers, cli)
is imported from here, so every other layer can build on it and ``pip install dsfields`` needs no
DeepSpeed, torch or pydantic to use it.
"""
