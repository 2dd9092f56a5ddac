"""Print params.yaml with an overlay merged in (e.g. params.local.yaml for local models).

Mappings merge key by key; lists, scalars, ``benchmarks`` and ``panel.models`` are replaced
whole (an overlay naming one benchmark runs only that one).

    python scripts/merge_params.py params.yaml params.local.yaml > scratch/params.yaml
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

_WHOLE = {("benchmarks",)}


def merge(base: Any, over: Any, path: tuple[str, ...] = ()) -> Any:
    """``over`` on top of ``base``: recursive for mappings, replacing otherwise."""
    if path in _WHOLE or not (isinstance(base, dict) and isinstance(over, dict)):
        return over
    out = dict(base)
    for key, value in over.items():
        out[key] = merge(base.get(key), value, (*path, str(key))) if key in base else value
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: merge_params.py BASE.yaml OVERLAY.yaml", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        base = yaml.safe_load(fh)
    with open(argv[1], encoding="utf-8") as fh:
        over = yaml.safe_load(fh) or {}
    yaml.safe_dump(merge(base, over), sys.stdout, sort_keys=False, allow_unicode=True, width=100)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
