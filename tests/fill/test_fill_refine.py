"""Refinement of a round's finalists, against a panel whose truth is known exactly."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from curation.calibrate import (
    AdaptiveSettings,
    CalibrateSettings,
    annotate,
    annotation_lineage,
    b_of_z,
    record_measurement,
)
from curation.candidates import Candidate
from curation.errors import ConfigError
from curation.fill import FillSettings, RefineSettings
from curation.fill._search import Context, _prior, expected_sq_dev, refine, select
from curation.fill._targets import Target
from curation.params_model import validate_params
from tests.calibrate.test_calibrate_adaptive import CAL, ControlledPanel, _child, _panel
from tests.conftest import minimal_benchmark


class RecordingPanel(ControlledPanel):
    """The controlled 1PL panel, remembering which sample indices each item was asked."""

    def __init__(self, difficulty: dict[str, float]) -> None:
        super().__init__(difficulty)
        self.samples: dict[str, set[int]] = {}

    async def complete(self, request):  # type: ignore[no-untyped-def]
        self.samples.setdefault(request.item, set()).add(request.sample)
        return await super().complete(request)


def _screened(
    panel, settings, measuring, truth: dict[str, float], z_star: float
) -> list[Candidate]:
    """Candidate records of children measured by the screening rule only."""
    children = [_child(item) for item in truth]
    notes = asyncio.run(
        annotate(
            children,
            panel,
            target_z=z_star,
            tolerance=measuring.tolerance,
            rule=settings.screening(measuring.adaptive),
            stop_on_target=False,
        )
    )
    out = []
    for c in children:
        rec = Candidate(
            benchmark="toy",
            candidate=c.item,
            method="benchfill",
            parent="q1",
            round=1,
            target_z=z_star,
            question=c.question,
            answer=c.answer,
            answer_type=c.answer_type,
            status="invalid",
            source="simulated",
            rewriter_model="simulated",
            prompt_hash=None,
            calibration="cal.json",
        )
        a = notes[c.item]
        rec = record_measurement(rec, a, target_z=z_star, tolerance=measuring.tolerance)
        out.append(rec.replace(lineage=json.dumps(annotation_lineage(a) | {"cost": a.cost()})))
    return out


def test_refinement_measures_only_finalists_with_fresh_trials_and_finds_the_closest(tmp_path):
    z_star = 0.5
    truth = {"near": 0.503, "close": 0.52, "far": 0.45, "off": 0.9}
    settings, measuring = FillSettings(), CalibrateSettings(tolerance=0.01)
    rule, adaptive = settings.refine, measuring.adaptive
    screening = settings.screening(adaptive)
    assert screening.max_trials == rule.screen_trials == 8
    backend = RecordingPanel({k: b_of_z(CAL, z) for k, z in truth.items()})
    panel = _panel(tmp_path, backend)
    records = _screened(panel, settings, measuring, truth, z_star)
    screened = {r.candidate: r for r in records}
    assert json.loads(screened["off"].lineage or "{}")["decision"] == "off-target"
    ctx = Context(  # only what the refinement reads
        benchmark="toy",
        settings=settings,
        calibrate=measuring,
        panel=panel,
        rewriter=None,  # type: ignore[arg-type]
        rewriter_model=None,  # type: ignore[arg-type]
        cache=panel.cache,
        journal=None,  # type: ignore[arg-type]
        prompts=None,  # type: ignore[arg-type]
        llm=panel.llm,
        calibration_file="cal.json",
    )
    out = {r.candidate: r for r in asyncio.run(refine(ctx, records, Target(z_star, None)))}
    # the clearly off-target child is left alone: no trial is spent on it
    assert out["off"] == screened["off"]
    assert max(backend.samples["off"]) < screening.max_trials
    extra = {k: json.loads(r.lineage or "{}").get("refinement", {}) for k, r in out.items()}
    n_models = len(panel.models)
    for k in ("near", "close", "far"):
        spent = extra[k].get("trials_per_model", 0)
        assert spent % rule.batch == 0 and spent <= rule.max_trials
        assert out[k].n_trials == screened[k].n_trials + spent * n_models  # pooled counts
        # refinement trials are fresh: indices from adaptive.max_trials on, never the screening's
        fresh = {i for i in backend.samples[k] if i >= screening.max_trials}
        first = adaptive.max_trials
        assert fresh == set(range(first, first + spent))
    assert extra["near"]["trials_per_model"] > 0
    # the child closest on the truth is the one selected, and known to the tolerance
    best = select(list(out.values()), z_star)
    assert best is not None and best.candidate == "near"
    lineage = json.loads(best.lineage or "{}")
    assert abs(float(best.z or 0) - z_star) <= measuring.tolerance
    assert lineage["se_z"] < json.loads(screened["near"].lineage or "{}")["se_z"] / 2
    # it stopped only once the leader was expected within tolerance/2 (or out of budget)
    calibrated = [r for k, r in out.items() if r.z is not None and k != "off"]  # refine's pool
    esd = expected_sq_dev(best, z_star, _prior(calibrated))
    spent_all = extra["near"]["trials_per_model"] == rule.max_trials
    assert esd <= (measuring.tolerance / 2) ** 2 or spent_all
    # confirmation trials start past every index screening and refinement can use
    assert settings.confirm_first_sample(adaptive) == adaptive.max_trials + rule.max_trials


def test_refine_settings():
    adaptive, cal = AdaptiveSettings(), CalibrateSettings()
    d = FillSettings()
    assert d.refine.enabled and d.confirm_first_sample(adaptive) == 32 + d.refine.max_trials
    off = FillSettings(refine=RefineSettings(finalists=0))
    assert not off.refine.enabled
    assert off.screening(adaptive) == adaptive
    assert off.confirm_first_sample(adaptive) == adaptive.max_trials
    capped = FillSettings(refine=RefineSettings(screen_trials=64))
    assert capped.screening(adaptive).max_trials == adaptive.max_trials  # never past adaptive's
    small = AdaptiveSettings(first_batch=4, batch=2, max_trials=16)
    screening = d.screening(small)  # capped at screen_trials (8), first batch kept
    assert (screening.max_trials, screening.first_batch, screening.batch) == (8, 4, 2)
    assert off.fingerprint_dict(cal, backend="simulate") != d.fingerprint_dict(
        cal, backend="simulate"
    )
    for bad, where, why in [
        ({"batch": 8, "max_trials": 20}, "fill.refine.max_trials", "multiple of batch (8)"),
        ({"depth": 1}, "fill.refine.depth", "unknown setting"),
        ({"screen_trials": 0}, "fill.refine.screen_trials", "greater than 0"),
    ]:
        expected = f"^params\\.yaml: {re.escape(where)}: .*{re.escape(why)}"
        with pytest.raises(ConfigError, match=expected):
            validate_params(
                {"benchmarks": {"toy": minimal_benchmark("toy")}, "fill": {"refine": bad}}
            )
    # with refinement off, max_trials need not be whole batches
    assert not RefineSettings(finalists=0, batch=8, max_trials=20).enabled
