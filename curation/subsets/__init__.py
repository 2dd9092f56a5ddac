"""Calibrated subsets by greedy quantile matching, and rank agreement (SPEC §6).

* :func:`match_quantiles` — for k = 1..m pick the unused item whose z is closest to
  q_k = µ⁻¹((k − ½)/m), ties to the lower id; :func:`target_ppf`, :func:`quantile_levels`.
* :func:`model_scores`, :class:`ReferenceRanking`, :func:`rank_agreement` — Kendall τ
  between the model ranking on a set of items and a reference ranking.
* :func:`evaluate_subset` → :class:`SubsetReport` — DDM, gaps and τ of a subset next to
  the full benchmark's.
* :class:`SubsetsSettings` — the ``subsets:`` section of params.yaml (per benchmark:
  ``sizes_for``, ``targets_for`` → :class:`SubsetTarget`, ``reference_for`` →
  :class:`ReferenceSettings`, ``names_for``).
* :func:`read_difficulty`, :func:`measured_z` — the annotate stage's table, as read here.
* :func:`estimation_subsets`, :func:`estimation_frame` — the ``estimate-<m>`` subsets
  (``subsets.estimation``: :class:`SubsetEstimationSettings`), chosen to estimate the
  full score, with weights; :func:`validate_subsets` (:class:`SubsetSpec`) — every
  published subset validated on held-out models beside random subsets (issue 28).
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.subsets._estimation import (
        SubsetSpec,
        adaptive_name,
        calibrated_config,
        describe,
        estimation_block,
        estimation_frame,
        estimation_name,
        estimation_subsets,
        recommend,
        validate_subsets,
    )
    from curation.subsets._inputs import measured_z, read_difficulty
    from curation.subsets._match import Subset, match_quantiles, quantile_levels, target_ppf
    from curation.subsets._ranking import (
        RankAgreement,
        ReferenceRanking,
        model_scores,
        rank_agreement,
    )
    from curation.subsets._report import Coverage, SubsetReport, evaluate_subset
    from curation.subsets._settings import (
        ADAPTIVE_PREFIX,
        CALIBRATED_PREFIX,
        BenchmarkSubsetsSettings,
        ReferenceSettings,
        SubsetEstimationSettings,
        SubsetsSettings,
        SubsetTarget,
    )

_EXPORTS = {
    "SubsetSpec": "_estimation",
    "calibrated_config": "_estimation",
    "ADAPTIVE_PREFIX": "_settings",
    "CALIBRATED_PREFIX": "_settings",
    "describe": "_estimation",
    "estimation_block": "_estimation",
    "estimation_frame": "_estimation",
    "estimation_name": "_estimation",
    "recommend": "_estimation",
    "adaptive_name": "_estimation",
    "estimation_subsets": "_estimation",
    "validate_subsets": "_estimation",
    "BenchmarkSubsetsSettings": "_settings",
    "SubsetEstimationSettings": "_settings",
    "SubsetsSettings": "_settings",
    "Coverage": "_report",
    "RankAgreement": "_ranking",
    "ReferenceRanking": "_ranking",
    "ReferenceSettings": "_settings",
    "Subset": "_match",
    "SubsetReport": "_report",
    "SubsetTarget": "_settings",
    "evaluate_subset": "_report",
    "match_quantiles": "_match",
    "measured_z": "_inputs",
    "model_scores": "_ranking",
    "quantile_levels": "_match",
    "rank_agreement": "_ranking",
    "read_difficulty": "_inputs",
    "target_ppf": "_match",
}

__all__ = [
    "ADAPTIVE_PREFIX",
    "CALIBRATED_PREFIX",
    "SubsetSpec",
    "calibrated_config",
    "describe",
    "estimation_block",
    "estimation_frame",
    "estimation_name",
    "recommend",
    "adaptive_name",
    "estimation_subsets",
    "validate_subsets",
    "BenchmarkSubsetsSettings",
    "SubsetEstimationSettings",
    "SubsetsSettings",
    "Coverage",
    "RankAgreement",
    "ReferenceRanking",
    "ReferenceSettings",
    "Subset",
    "SubsetReport",
    "SubsetTarget",
    "evaluate_subset",
    "match_quantiles",
    "measured_z",
    "model_scores",
    "quantile_levels",
    "rank_agreement",
    "read_difficulty",
    "target_ppf",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
