"""The card's "Resolution and anchoring" section (issue 13): z is a property of the panel.

Kept apart from :mod:`curation.publish._card` so the card's other sections and this one
change independently. The input is :meth:`curation.measure.Resolution.to_metrics` of the
original items (or ``{"unavailable": reason}`` when the stored fit does not line up).
"""

from __future__ import annotations

from typing import Any

from curation.report.format import NOT_AVAILABLE, Blanks, count, fixed, percent
from curation.report.markdown import cell

_BLANKS = Blanks(missing=NOT_AVAILABLE, nonfinite=NOT_AVAILABLE)

MAX_GAP_FLAG = 0.10
"""The card's Max Gap flag threshold (SPEC §2)."""
CLIPPED_NOTE_SHARE = 0.05
"""From this share of clipped items on, the card says what the clipping means."""


def resolution_lines(res: dict[str, Any]) -> list[str]:
    """Markdown lines: trials per cell, z levels, resolution, clipped counts, panel span."""
    if not res:
        return []
    out = ["### Resolution and anchoring", ""]
    if "unavailable" in res:
        return [*out, f"Not available for this build: {cell(res['unavailable'])}", ""]
    p = res.get("panel", {})
    total = int(res.get("n_items", 0))
    low, high = int(res["n_clipped_low"]), int(res["n_clipped_high"])
    share_low, share_high = float(res["share_clipped_low"]), float(res["share_clipped_high"])
    out += [
        "z is measured on this panel: z = 0 is the weakest model's ability, z = 1 the "
        "strongest's, and items beyond either end are clipped to it.",
        "",
        f"- **Trials per cell:** {res.get('trials_per_cell', 0):g}; **distinct z levels:** "
        f"{res['n_levels']}",
        f"- **Resolution:** {fixed(res.get('resolution'), blanks=_BLANKS)} (median z change "
        "one more or one fewer correct answer makes to an item; with one trial per cell a "
        "1PL z depends only on the item's total score)",
        f"- **Clipped at z = 0** (easier than the weakest model, {cell(p.get('weakest', '?'))}):"
        f" {count(low)} ({percent(share_low, 0)})",
        f"- **Clipped at z = 1** (harder than the strongest model, "
        f"{cell(p.get('strongest', '?'))}): {count(high)} ({percent(share_high, 0)})",
        f"- **Panel ability span:** {p.get('theta_min', 0):.2f} to {p.get('theta_max', 0):.2f} "
        f"logits ({p.get('span', 0):.2f}) over {p.get('n_models', '?')} models",
    ]
    if share_low >= CLIPPED_NOTE_SHARE and total:
        out.append(
            f"- {percent(share_low, 0)} of items ({count(low)} of {count(total)}) sit below "
            "the panel's weakest model: their z is only a bound and the DDM largely reflects "
            "that point mass; weaker panel models would measure them."
        )
    if share_high >= CLIPPED_NOTE_SHARE and total:
        out.append(
            f"- {percent(share_high, 0)} of items ({count(high)} of {count(total)}) sit above "
            "the panel's strongest model; stronger panel models would measure them."
        )
    coarsest = res.get("coarsest_step")
    if coarsest is not None and coarsest >= MAX_GAP_FLAG:
        out.append(
            f"- One score step moves an item by up to {coarsest:.3f} in z, so these data "
            f"cannot resolve gaps at the {MAX_GAP_FLAG:.2f} flag threshold there: more "
            "trials per item (k per cell make the step about k times finer) or panel models "
            "near that difficulty would."
        )
    out += ["", "Gaps no wider than one score step reflect this resolution, not the benchmark.", ""]
    return out
