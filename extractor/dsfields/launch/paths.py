"""A dry-run launch writes nowhere the config says: every path in it pointed into the launch's own folder.

``check --launch`` (and every :class:`dsfields.launch.client.LaunchClient` launch) runs DeepSpeed on the user's
config; DeepSpeed's NVMe swapper makes ``<nvme_path>/zero_stage_3/...`` before it finds async_io missing and the
monitors make their ``output_path`` folders. The config is rewritten first: each string at a key named like a path
(and at the release's path fields, from its snapshot) becomes a relative path, so it lands in the sandboxed
worker's working folder, and the verdict lists what was redirected.

Imports: the standard library only.
"""

from __future__ import annotations

import copy
import re
from typing import Any

PATH_NAME = r"(?:^|_)(?:path|dir|folder|file)$"
"""A key whose name ends so names a place DeepSpeed writes to or reads from (``nvme_path``, ``output_path``,
``exps_dir``, ``output_file``, ``persistent_storage_path``): found by name in the release's snapshot."""
REDIRECTED = "dsfields-redirected"
"""Where redirected paths point: relative, so inside the sandboxed worker's working folder."""


def _matches(path: list[str], pattern: list[str]) -> bool:
    return len(path) == len(pattern) and all(q in ("*", p) for p, q in zip(path, pattern, strict=True))


def redirect_paths(data: dict[str, Any], keys: list[str] | tuple[str, ...] = ()) -> tuple[dict[str, Any], list[str]]:
    """``data`` with every string at a path key (``keys``, or a key named like one) pointed into the launch's
    own folder, and the dotted paths changed; a name that sibling paths are joined with (``job_name``) loses
    its separators. The caller's ``data`` is not changed; a path already redirected is left as it is."""
    name = re.compile(PATH_NAME)
    patterns = [k.split(".") for k in keys]
    out = copy.deepcopy(data)
    changed: list[str] = []

    def walk(node: dict[str, Any], prefix: list[str]) -> None:
        redirected = False
        for key, value in node.items():
            path = [*prefix, str(key)]
            if isinstance(value, dict):
                walk(value, path)
            elif isinstance(value, str) and value and not value.startswith(f"{REDIRECTED}/") and (
                    name.search(str(key)) or any(
                        _matches(path, p) for p in patterns)):
                node[key] = f"{REDIRECTED}/{len(changed)}-{key}"
                changed.append(".".join(path))
                redirected = True
        if redirected:  # monitors write to <output_path>/<job_name>/: a name must not climb out again
            for key, value in node.items():
                if str(key).endswith("name") and isinstance(value, str) and (
                        "/" in value or "\\" in value or value in (".", "..")):
                    node[key] = "dsfields-job"
                    changed.append(".".join([*prefix, str(key)]))

    walk(out, [])
    return out, changed
