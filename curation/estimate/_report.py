"""What ``curate estimate`` prints and writes: a new model's estimates against a stored
calibration, as a terminal table and as ``estimate.json`` (schemas/estimate.schema.json).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from curation.errors import InputError
from curation.estimate._bank import ItemBank
from curation.estimate._estimate import ScoreEstimate, estimate_models
from curation.estimate._settings import EstimationSettings, EstimatorName

FORMAT = "benchcurate.estimate/1"


@dataclass(frozen=True)
class EstimateReport:
    """The estimates of one run of ``curate estimate`` and what they were made from."""

    bank: ItemBank
    estimates: tuple[ScoreEstimate, ...]
    source: str
    """The responses read (a file, folder or glob)."""
    input_format: str
    summary: str
    """What the reader said it read (one line)."""
    ignored_items: tuple[str, ...] = ()
    """Items answered that the calibration has no difficulty for (left out)."""
    next_items: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """``curate estimate --next``: model -> the items it should answer next, best first
    (an adaptive test's next step; :func:`curation.estimate.next_items`)."""
    next_note: str = ""
    """One line on the adaptive test (budget, answered so far)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: schemas/estimate.schema.json."""
        bank = self.bank
        return {
            "format": FORMAT,
            "benchmark": bank.benchmark,
            "calibration": {
                "source": bank.source,
                "irt_model": bank.model,
                "n_items": bank.n_items,
                "n_panel": len(bank.panel),
            },
            "input": {
                "path": self.source,
                "format": self.input_format,
                "summary": self.summary,
                "ignored_items": list(self.ignored_items),
            },
            "estimates": [e.to_dict() for e in self.estimates],
            **(
                {"next": {k: list(v) for k, v in self.next_items.items()}}
                if self.next_items
                else {}
            ),
        }

    def render(self) -> str:
        """The estimates as a table, one row per model, with a line of context."""
        from curation.report.format import fixed, percent
        from curation.report.text import table

        rows: list[tuple[str, ...]] = []
        for e in self.estimates:
            z = (
                "-"
                if e.z is None
                else f"{fixed(e.z, 3)} [{fixed(e.z_low, 3)}, {fixed(e.z_high, 3)}]"
            )
            rank = f"{e.rank} [{e.rank_low}, {e.rank_high}] of {e.n_panel + 1}"
            rows.append(
                (
                    e.model or "-",
                    f"{e.n_seen}/{e.n_items}",
                    percent(e.subset_accuracy),
                    percent(e.estimate) + (" (exact)" if e.exact else ""),
                    f"[{percent(e.low)}, {percent(e.high)}]",
                    f"{fixed(e.theta, 2)} [{fixed(e.theta_low, 2)}, {fixed(e.theta_high, 2)}]",
                    z,
                    rank,
                )
            )
        level = self.estimates[0].level if self.estimates else 0.9
        lvl = f"{100 * level:g}%"
        header = (
            "model",
            "items seen",
            "subset acc",
            "full-benchmark estimate",
            f"{lvl} interval",
            f"theta [{lvl}]",
            f"z [{lvl}]",
            f"rank [{lvl}]",
        )
        bank = self.bank
        lines = [
            f"{bank.benchmark}: {self.summary}",
            f"calibration: {bank.source} ({bank.model.upper()}, {bank.n_items} items, "
            f"{len(bank.panel)} panel models; item parameters fixed, no refit)",
        ]
        known = [e.model for e in self.estimates if e.model in set(bank.panel)]
        if known:
            lines.append(
                f"{', '.join(map(repr, known))} is in the calibration's panel: ranked "
                "against the other panel models (the calibration has seen its responses)"
            )
        if self.ignored_items:
            lines.append(
                f"{len(self.ignored_items)} answered item(s) have no difficulty in the "
                f"calibration and are left out (e.g. {self.ignored_items[0]!r})"
            )
        lines.append(table(header, rows))
        if any(not e.exact for e in self.estimates):
            lines.append(
                f"estimate = (observed successes + IRT prediction of the unseen items) / "
                f"{bank.n_items}; the interval holds the ability's uncertainty and the unseen "
                "items' own noise"
                + (
                    f", widened x{self.estimates[0].interval_scale:.2f} (the subset's "
                    "conformal scale on held-out models)"
                    if self.estimates and self.estimates[0].interval_scale != 1.0
                    else ""
                )
                + ". Rank: among the panel's full scores."
            )
        if self.next_note:
            lines.append(self.next_note)
        for model, items in self.next_items.items():
            more = f", ... ({len(items)} in all)" if len(items) > 20 else ""
            shown = ", ".join(items[:20]) + more if items else "none (the test is done)"
            lines.append(f"next for {model}: {shown}")
        return "\n".join(lines)


def estimate_table(
    bank: ItemBank,
    responses: pl.DataFrame,
    *,
    source: str,
    input_format: str,
    summary: str,
    estimator: EstimatorName = "irt",
    settings: EstimationSettings | None = None,
    weights: Mapping[str, float] | None = None,
    interval_scale: float = 1.0,
) -> EstimateReport:
    """Every model of a response table (model, item, n_trials, n_correct) estimated
    against ``bank``. Answered items the bank has no difficulty for are left out (and
    listed); a model with none of the bank's items is an :class:`InputError`.
    ``weights`` (item -> weight, an estimation subset's): what ``estimator="weighted"``
    averages the answered items with. ``interval_scale``: a subset's conformal scale
    (:func:`curation.estimate.estimate_observed`)."""
    if estimator == "weighted" and weights is None:
        raise InputError(
            "estimator 'weighted' needs the subset's weights (curate estimate --subset "
            "estimate-<m>)",
            file=source,
        )
    for col in ("model", "item", "n_trials", "n_correct"):
        if col not in responses.columns:
            raise InputError(f"responses lack column {col!r}", file=source, field=col)
    known = set(bank.items)
    answered = responses["item"].cast(pl.String).unique(maintain_order=True).to_list()
    ignored = tuple(i for i in answered if i not in known)
    kept = responses.filter(pl.col("item").cast(pl.String).is_in(list(known)))
    kept = kept.filter(pl.col("n_trials") > 0)
    models = responses["model"].cast(pl.String).unique(maintain_order=True).to_list()
    if not models:
        raise InputError("no responses to estimate from", file=source)
    empty = sorted(set(models) - set(kept["model"].cast(pl.String).to_list()))
    if empty:
        raise InputError(
            f"model {empty[0]!r} answered none of the {bank.n_items} items the calibration "
            f"of {bank.benchmark!r} holds ({bank.source})",
            file=source,
            field="item",
        )
    estimates = estimate_models(
        bank,
        kept,
        estimator=estimator,
        weights=weights,
        settings=settings,
        source=source,
        interval_scale=interval_scale,
    )
    return EstimateReport(
        bank=bank,
        estimates=tuple(estimates),
        source=source,
        input_format=input_format,
        summary=summary,
        ignored_items=ignored,
    )


def write_report(report: EstimateReport, out: str | Path) -> Path:
    """``estimate.json``, validated against its schema first (atomic)."""
    from curation.io.atomic import atomic_path
    from curation.schemas import validate_records

    path = Path(out)
    doc = report.to_dict()
    validate_records([doc], "estimate", file=str(path), record_label="record")
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
