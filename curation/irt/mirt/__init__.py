"""Multidimensional IRT across benchmarks (SPEC §3.3, last point).

A compensatory multidimensional 2PL, P(correct) = σ(a_i·θ_j − b_i) with θ_j ∈ R^d,
fitted jointly to the items of several benchmarks answered by one panel of models
(missing cells allowed, binomial over trials), by MAP with weak Gaussian priors and
analytic gradients. d is chosen by the likelihood of randomly held-out cells (and BIC
is reported); the loadings are rotated for readability (varimax by default, oblimin
optionally) after the fit. The dimensions are statistical, not named skills.

Typical use::

    data = pool_responses({"gsm8k": df1, "crux": df2}, common_models=True)
    sel = select_dimension(data, d_max=4, holdout=0.1, seed=0)
    report = build_report(data, sel, rotation="varimax")
    print(render_mirt_markdown(report))

Lower level: :func:`fit_mirt` fits one d; :func:`rotate_fit` rotates a fit;
:func:`flip_attribution` explains why two models swap places between two benchmarks.
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.irt.mirt._fit import (
        MirtData,
        MirtFit,
        SimulatedMirt,
        cell_loglik,
        fit_loglik,
        fit_mirt,
        pool_responses,
        simulate_mirt,
        standardise,
    )
    from curation.irt.mirt._flips import (
        Flip,
        FlipItem,
        find_flips,
        flip_attribution,
        item_contributions,
    )
    from curation.irt.mirt._markdown import render_mirt_markdown, render_models_html
    from curation.irt.mirt._profiles import (
        BenchmarkProfile,
        Similarity,
        benchmark_profiles,
        benchmark_similarity,
        expected_scores,
    )
    from curation.irt.mirt._report import MirtReport, build_report, loadings_frame
    from curation.irt.mirt._rotate import (
        ROTATIONS,
        congruence,
        oblimin,
        procrustes,
        rotate_fit,
        varimax,
    )
    from curation.irt.mirt._select import (
        SELECT_RULES,
        DimensionRow,
        Selection,
        holdout_mask,
        select_dimension,
    )
    from curation.irt.mirt._settings import MirtPriorSettings, MirtSettings

_EXPORTS = {
    "MirtPriorSettings": "_settings",
    "MirtSettings": "_settings",
    "ROTATIONS": "_rotate",
    "SELECT_RULES": "_select",
    "BenchmarkProfile": "_profiles",
    "DimensionRow": "_select",
    "Flip": "_flips",
    "FlipItem": "_flips",
    "MirtData": "_fit",
    "MirtFit": "_fit",
    "MirtReport": "_report",
    "Selection": "_select",
    "Similarity": "_profiles",
    "SimulatedMirt": "_fit",
    "benchmark_profiles": "_profiles",
    "benchmark_similarity": "_profiles",
    "build_report": "_report",
    "cell_loglik": "_fit",
    "congruence": "_rotate",
    "expected_scores": "_profiles",
    "find_flips": "_flips",
    "fit_loglik": "_fit",
    "fit_mirt": "_fit",
    "flip_attribution": "_flips",
    "holdout_mask": "_select",
    "item_contributions": "_flips",
    "loadings_frame": "_report",
    "oblimin": "_rotate",
    "pool_responses": "_fit",
    "procrustes": "_rotate",
    "render_mirt_markdown": "_markdown",
    "render_models_html": "_markdown",
    "rotate_fit": "_rotate",
    "select_dimension": "_select",
    "simulate_mirt": "_fit",
    "standardise": "_fit",
    "varimax": "_rotate",
}

__all__ = [
    "MirtPriorSettings",
    "MirtSettings",
    "ROTATIONS",
    "SELECT_RULES",
    "BenchmarkProfile",
    "DimensionRow",
    "Flip",
    "FlipItem",
    "MirtData",
    "MirtFit",
    "MirtReport",
    "Selection",
    "Similarity",
    "SimulatedMirt",
    "benchmark_profiles",
    "benchmark_similarity",
    "build_report",
    "cell_loglik",
    "congruence",
    "expected_scores",
    "find_flips",
    "fit_loglik",
    "fit_mirt",
    "flip_attribution",
    "holdout_mask",
    "item_contributions",
    "loadings_frame",
    "oblimin",
    "pool_responses",
    "procrustes",
    "render_mirt_markdown",
    "render_models_html",
    "rotate_fit",
    "select_dimension",
    "simulate_mirt",
    "standardise",
    "varimax",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
