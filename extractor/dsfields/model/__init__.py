"""The model layer: typed snapshot records and what is computed from snapshots alone; stdlib only,
imports nothing from dsfields outside model/ except dsfields.snapshot for now."""
