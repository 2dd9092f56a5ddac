"""The card's "Uncertainty of the difficulty figures" section (issue 29).

A user who publishes DDM or Max Gap needs two intervals, not one: how well this panel
pins the figure down (the gaps stage's bootstrap, self-checked at this benchmark's shape)
and what another panel of as many similar models would measure (the panel bootstrap),
with the leave-one-model-out range beside them. The input is the benchmark's
``intervals`` entry of metrics/gaps.json; the card adds nothing the gaps report does not
say.
"""

from __future__ import annotations

from typing import Any

from curation.report.format import fixed, interval
from curation.report.markdown import cell

_LABELS = (("ddm", "DDM (uniform)"), ("max_gap", "Max Gap"), ("top_3_sum", "Top-3 Sum"))


def _within(iv: dict[str, Any]) -> str:
    check = iv.get("self_check") or {}
    if check.get("status") == "withheld":
        return f"{fixed(iv['estimate'])}; interval withheld ({cell(str(check.get('reason')))})"
    text = f"{fixed(iv['estimate'])} {interval(iv['low'], iv['high'])}"
    if check:
        text += (
            f"; covers {check['coverage_smooth']:.2f} / {check['coverage_lattice']:.2f} "
            "at this shape"
        )
    return text


def uncertainty_lines(ivs: dict[str, Any]) -> list[str]:
    """Markdown lines: within-panel and other-panel intervals, leave-one-model-out."""
    if not ivs:
        return []
    panel = ivs.get("panel") or {}
    out = [
        "### Uncertainty of the difficulty figures",
        "",
        f"{ivs['ddm']['level']:.0%} intervals of the original items' figures "
        "(`reports/gaps.md` of the build has the method). *This panel*: what the data "
        "pin down with the panel fixed, and how often such an interval held the truth in "
        "simulations of this benchmark's own design (smooth / lattice truth). *Another "
        "panel*: where the figure of another panel of as many similar models would fall.",
        "",
        "| figure | this panel | another panel | one model left out |",
        "|---|---|---|---|",
    ]
    loo = panel.get("loo") or {}
    for key, label in _LABELS:
        iv = ivs.get(key)
        if not iv:
            continue
        other = panel.get(key)
        out.append(
            f"| {label} | {_within(iv)} | "
            + (interval(other["low"], other["high"]) if other else "—")
            + " | "
            + (interval(loo[key]["low"], loo[key]["high"]) if key in loo else "—")
            + " |"
        )
    out.append("")
    if panel.get("ddm"):
        d = panel["ddm"]
        out.append(
            f"Another panel of {panel['n_models']} similar models would give DDM in "
            f"{interval(d['low'], d['high'])}."
            + (
                f" Leaving out {cell(loo['most_influential_model'])} moves it most "
                f"({fixed(loo['ddm_shift'])})."
                if loo
                else ""
            )
        )
        out.append("")
    return out
