"""Item Response Theory for benchmark difficulty (SPEC §3.3–3.4).

* :func:`fit` — 1PL/2PL by MAP (block Newton, Laplace intervals) or NUTS (posterior
  draws, R̂/ESS/divergences); returns a :class:`FitResult` with a :class:`Calibration`.
* :class:`Calibration` — abilities plus the fixed logit → z map (``to_z``), saved as
  JSON; the only way any item gets a z.
* :func:`calibrate_items` — online calibration of new items, abilities held fixed;
  :func:`calibrate_counts` the same from count sequences (no frame to validate).
* :func:`bic_compare`, :func:`loo_stability` — model choice and panel sensitivity.
* :func:`simulate_responses` — data from known parameters for recovery tests.
* :func:`parametric_bootstrap` — refit simulated copies of the data (smooth empirical-Bayes
  truth, re-derived scale) for calibrated intervals of any z metric.
* :func:`score_steps` — each item's b with one more / one fewer correct answer.

Identification: mean ability 0. Priors (weak, documented in ``Settings``):
θ ~ N(0, 3²), b ~ N(0, 3²), log a ~ N(0, 0.5²).
Importing this package never imports JAX; only ``method="nuts"`` does. Exports resolve
lazily (numpy, polars and scipy load on first use), so ``import curation.irt`` is cheap.
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.irt._bootstrap import BootstrapReplicates, parametric_bootstrap
    from curation.irt._calibrate import calibrate_counts, calibrate_items
    from curation.irt._checks import bic_compare, loo_stability
    from curation.irt._fit import FitResult, fit
    from curation.irt._resolution import score_steps
    from curation.irt._scale import Calibration
    from curation.irt._settings import AnnotateSettings
    from curation.irt._simulate import simulate_responses

_EXPORTS = {
    "AnnotateSettings": "_settings",
    "BootstrapReplicates": "_bootstrap",
    "Calibration": "_scale",
    "FitResult": "_fit",
    "bic_compare": "_checks",
    "calibrate_counts": "_calibrate",
    "calibrate_items": "_calibrate",
    "fit": "_fit",
    "loo_stability": "_checks",
    "parametric_bootstrap": "_bootstrap",
    "score_steps": "_resolution",
    "simulate_responses": "_simulate",
}

__all__ = [
    "AnnotateSettings",
    "BootstrapReplicates",
    "Calibration",
    "FitResult",
    "bic_compare",
    "calibrate_counts",
    "calibrate_items",
    "fit",
    "loo_stability",
    "parametric_bootstrap",
    "score_steps",
    "simulate_responses",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
