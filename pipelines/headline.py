"""Stage `headline`: three figures per benchmark -> metrics/headline.json.

Reads the detailed metrics of the gaps and fill stages (all committed to git) and keeps
the figures a reader compares between experiments: the DDM, the Top-3 Sum of the gaps and
BenchFill's change of it. This is the only DVC metrics file, so `dvc exp show` and
`dvc metrics diff` print these and nothing else. One file keyed by benchmark, not one file
per benchmark: DVC prefixes a metric name with its file's path whenever two files share
it ("metrics/headline/gsm8k.json:ddm"), which made `dvc exp show` hundreds of columns wide;
here the names are "gsm8k.ddm". Everything else stays in the detail files beside it
(metrics/gaps.json, metrics/fill/<b>.json, ...: not DVC metrics; docs/metrics.md lists
every name).
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split
import json
import re
from pathlib import Path
from typing import Any

from curation.io.atomic import write_json
from curation.io.tables import require_output
from curation.params_model import ParamsFile
from curation.paths import GAPS_METRICS, HEADLINE_METRICS, fill_metrics_path
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
    *,
    primary: str = "uniform",
) -> dict[str, Any]:
    """The headline figures of one benchmark from the gaps and fill metrics.

    ``primary`` names the target whose DDM leads when a benchmark has several.
    ``fill_pct`` is the Top-3 Sum change in percent with its sign (-17.04: the gaps got
    17% smaller), as `curate summary` prints it ("-17.0%").
    """
    g = gaps.get(benchmark) or {}
    ddm = g.get("ddm")
    if isinstance(ddm, dict):  # one DDM per target (key-sorted): take the primary target's
        ddm = ddm.get(_key(primary), next(iter(ddm.values()), None))
    reduction = _r(_dig(fill, "methods", "benchfill", "top_3_reduction_pct"))
    return {
        "ddm": _r(ddm),
        "top3": _r(g.get("top_3_sum")),
        "fill_pct": None if reduction is None else round(-reduction, 2) + 0.0,
    }


def run(params: ParamsFile, *, params_file: str = "params.yaml") -> str:  # noqa: ARG001 (stage_main passes params_file)
    """Run `headline` over every benchmark on the validated params: the lines stage_main prints."""
    gaps = _read(GAPS_METRICS, "gaps")
    metrics = {
        b: headline(
            b,
            gaps,
            _read(fill_metrics_path(b), f"fill@{b}"),
            primary=str(params.gaps.targets[0]),
        )
        for b in params.benchmarks
    }
    validate_records([metrics], "headline_metrics", file=str(HEADLINE_METRICS))
    write_json(HEADLINE_METRICS, metrics)
    lines = [f"{b}: " + ", ".join(f"{k} {v}" for k, v in m.items()) for b, m in metrics.items()]
    return "\n".join([*lines, f"-> {HEADLINE_METRICS}"])


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.headline``): validate params once, run, exit 0/2/3."""
    return stage_main("headline", run, argv, per_benchmark=False, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
