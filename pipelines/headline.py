"""Stage `headline`: about ten headline figures per benchmark -> metrics/headline/<b>.json.

Reads the detailed metrics of the gaps, fill and subsets stages (all committed to git)
and keeps the figures a reader compares between experiments: n, DDM, Max Gap, Top-3/5,
flags, BenchFill's reduction and the calibrated subset's DDM, rounded to 4 decimals. This
is the file `dvc metrics show` and `dvc exp show` print, one row per benchmark.
"""

from __future__ import annotations

import curation.blas_kernel  # noqa: F401  (first: OpenBLAS picks its kernels as numpy loads)

# isort: split
import json
import re
from pathlib import Path
from typing import Any

from curation.io.atomic import write_json
from curation.io.tables import require_output
from curation.params_model import ParamsFile
from curation.paths import (
    GAPS_METRICS,
    fill_metrics_path,
    headline_metrics_path,
    subsets_metrics_path,
)
from curation.schemas import validate_records
from curation.stage_main import stage_main


def _read(path: Path, produced_by: str) -> dict[str, Any]:
    data = json.loads(require_output(path, produced_by=produced_by).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _dig(obj: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _r(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return round(float(value), 4)


def _key(target: Any) -> str:
    """A gaps target as metrics/gaps.json names it ("beta(2, 2)" -> "beta_2_2")."""
    return re.sub(r"[^0-9A-Za-z]+", "_", str(target)).strip("_")


def headline(
    benchmark: str,
    gaps: dict[str, Any],
    fill: dict[str, Any],
    subsets: dict[str, Any],
    *,
    primary: str = "uniform",
) -> dict[str, Any]:
    """The headline figures of one benchmark from the gaps, fill and subsets metrics.

    ``primary`` names the target whose DDM and subset lead when a benchmark has several.
    """
    g = gaps.get(benchmark) or {}
    ddm = g.get("ddm")
    if isinstance(ddm, dict):  # one DDM per target (key-sorted): take the primary target's
        ddm = ddm.get(_key(primary), next(iter(ddm.values()), None))
    flags = g.get("flags") or {}
    first_subset: Any = next(iter((subsets.get("subsets") or {}).values()), {})
    n = g.get("n")
    return {
        "n": int(n) if isinstance(n, int) else None,
        "ddm": _r(ddm),
        "max_gap": _r(g.get("max_gap")),
        "top3": _r(g.get("top_3_sum")),
        "top5": _r(g.get("top_5_sum")),
        "flags": sum(1 for k, v in flags.items() if k != "any" and v is True) if flags else None,
        "fill_top3_pct": _r(_dig(fill, "methods", "benchfill", "top_3_reduction_pct")),
        "fill_max_gap": _r(_dig(fill, "methods", "benchfill", "max_gap_after")),
        "sub_ddm": _r(_dig(first_subset, "ddm_target")),
        "tau": _r(_dig(subsets, "full", "tau", "tau")),
    }


def run(params: ParamsFile, benchmark: str, *, params_file: str = "params.yaml") -> str:  # noqa: ARG001 (stage_main passes params_file)
    """Run `headline` for one benchmark on the validated params: the line stage_main prints."""
    metrics = headline(
        benchmark,
        _read(GAPS_METRICS, "gaps"),
        _read(fill_metrics_path(benchmark), f"fill@{benchmark}"),
        _read(subsets_metrics_path(benchmark), f"subsets@{benchmark}"),
        primary=str(params.gaps.targets[0]),
    )
    out = headline_metrics_path(benchmark)
    validate_records([metrics], "headline_metrics", file=str(out))
    write_json(out, metrics)
    shown = ", ".join(f"{k} {v}" for k, v in metrics.items())
    return f"{benchmark}: {shown} -> {out}"


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.headline``): validate params once, run, exit 0/2/3."""
    return stage_main("headline", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
