"""The card's "Estimating the full score from a subset" section (issue 28): what a score
on each published subset says about the full benchmark, validated on held-out models.

Every figure comes from the subsets stage's ``estimation`` block
(metrics/subsets/<b>.json; :func:`curation.subsets.estimation_block`): K folds over the
panel's models, each calibrating on the rest, re-selecting the subset and estimating the
held-out models' full scores with the project's estimator (``curate estimate``), beside
random subsets of the same size (median over draws).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from curation.report.markdown import cell


def _pp(x: float) -> str:
    return f"{x:.2f} pp"


def _rho(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def worse_than_random(block: Mapping[str, Any]) -> bool:
    """The subset's held-out error is not below random subsets' of its size."""
    return "unavailable" not in block and not block.get("beats_random", False)


def estimation_sentence(
    config: str, benchmark: str, block: Mapping[str, Any], *, adaptive: bool = False
) -> str:
    """One subset's held-out estimation error and ranking agreement, next to random's
    (``adaptive``: an adaptive test of m items, each model its own)."""
    if not block:
        return f"`{config}`: not validated as a full-score estimator in this build."
    if "unavailable" in block:
        return f"`{config}`: not validated as a full-score estimator: {cell(block['unavailable'])}."
    m, r = block["m"], block["random"]
    level = f"{100 * block['level']:g}%"
    what = f"an adaptive test of {m} items" if adaptive else f"a score on this {m}-item subset"
    text = (
        f"`{config}`: on held-out models, {what} estimates the full "
        f"{benchmark} score within {_pp(block['mae_pp'])} on average (90% of models within "
        f"{_pp(block['p90_ae_pp'])}, worst {_pp(block['max_ae_pp'])}; Spearman ρ "
        f"{_rho(block['spearman'])} and Kendall τ {_rho(block['kendall'])} with the full "
        f"ranking; its {level} intervals hold {100 * block['coverage']:.0f}% of the models); "
        f"{m} random items: {_pp(r['mae_pp'])} (90% within {_pp(r['p90_ae_pp'])}; ρ "
        f"{_rho(r['spearman'])}, τ {_rho(r['kendall'])})."
    )
    if worse_than_random(block):
        text += (
            f" **Worse than random:** {m} random items estimate the full score better "
            f"({_pp(r['mae_pp'])} against {_pp(block['mae_pp'])}); do not pick this subset "
            "to estimate a full score."
        )
    return text


def estimation_lines(
    benchmark: str,
    subsets: Sequence[Mapping[str, Any]],
    estimation: Sequence[Mapping[str, Any]],
) -> list[str]:
    """The section: the estimation configs first, then every calibrated subset."""
    if not subsets and not estimation:
        return []
    any_block = next(
        (
            e["estimation"]
            for e in [*estimation, *subsets]
            if e.get("estimation") and "unavailable" not in e["estimation"]
        ),
        None,
    )
    lines = ["### Estimating the full score from a subset", ""]
    how = (
        f"{any_block['folds']}-fold leave-models-out over {any_block['n_models']} panel models"
        if any_block
        else "leave-models-out cross-validation"
    )
    sampled = any_block.get("sampled") if any_block else None
    if any_block and sampled:  # a leaderboard: a sample of the held-out models scored
        how = (
            f"{any_block['folds']}-fold leave-models-out over {sampled['of']} panel models, "
            f"{sampled['scored']} of them scored"
        )
    lines += [
        "Run a model on a subset, then `curate estimate --subset <config>` (the benchmark's "
        "stored calibration, no refit) gives its full-benchmark score with a 90% interval: "
        "the observed successes plus the IRT prediction of the unseen items; the interval is "
        "widened by the factor that made it hold its level on held-out models (conformal, "
        "each fold scaled by the others). Validated the "
        f"way it is used ({how}): each fold calibrates on the other models, re-selects the "
        "subset and estimates the held-out models' full scores from their answers on it "
        "alone; random subsets of the same size (median over draws) are the baseline. Errors "
        "are in percentage points (pp) of accuracy.",
        "",
    ]
    for e in estimation:
        if e.get("start") is not None:
            star = " **Recommended** for this benchmark." if e.get("recommended") else ""
            sentence = estimation_sentence(
                e["config"], benchmark, e.get("estimation") or {}, adaptive=True
            )
            lines.append(
                f"- {sentence}{star} Run the model on the config's {e['start']} start items, "
                f"then `curate estimate --subset {e['config']} --next` names the "
                f"{e['block']} items to answer next from its answers so far (the items that "
                f"pin down its score best); repeat until {e['m']} are answered."
            )
            continue
        weights = (
            "; its `weight` column rebuilds the score as a weighted accuracy, which "
            + (
                f"misses by {_pp(e['estimation']['weighted']['mae_pp'])} on average"
                if (e.get("estimation") or {}).get("weighted")
                else "is cruder than the IRT estimate"
            )
            if e.get("weighted")
            else ""
        )
        star = " **Recommended** for this benchmark." if e.get("recommended") else ""
        lines.append(
            f"- {estimation_sentence(e['config'], benchmark, e.get('estimation') or {})}{star} "
            f"Made for this: {e['m']} items by the {e['design']} design on the full "
            f"calibration{weights}."
        )
    for s in subsets:
        block = s.get("estimation") or {}
        plain = ""
        if block and "unavailable" not in block:
            plain = (
                f" As a plain accuracy it is off by {_pp(block['subset_accuracy']['mae_pp'])} "
                "on average"
            )
        use = f"`curate estimate --subset {s['config']}` for the full score."
        lines.append(
            f"- {estimation_sentence(s['config'], benchmark, block)} This config is a "
            f"difficulty-balanced benchmark (items quantile-matched to {cell(s['target'])}): "
            "its plain accuracy is not the full score."
            + (f"{plain}; use {use}" if plain else f" Use {use}")
        )
    lines.append("")
    return lines
