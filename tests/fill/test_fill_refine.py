"""Refinement of a round's finalists, against a panel whose truth is known exactly."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from curation.calibrate import annotate, annotation_lineage, b_of_z, record_measurement
from curation.candidates import Candidate
from curation.errors import ConfigError
from curation.fill import fill_settings
from curation.fill._search import Context, _prior, expected_sq_dev, refine, select
from curation.fill._targets import Target
from tests.calibrate.test_calibrate_adaptive import CAL, ControlledPanel, _child, _panel


class RecordingPanel(ControlledPanel):
    """The controlled 1PL panel, remembering which sample indices each item was asked."""

    def __init__(self, difficulty: dict[str, float]) -> None:
        super().__init__(difficulty)
        self.samples: dict[str, set[int]] = {}

    async def complete(self, request):  # type: ignore[no-untyped-def]
        self.samples.setdefault(request.item, set()).add(request.sample)
        return await super().complete(request)


def _screened(panel, settings, truth: dict[str, float], z_star: float) -> list[Candidate]:
    """Candidate records of children measured by the screening rule only."""
    children = [_child(item) for item in truth]
    notes = asyncio.run(
        annotate(
            children,
            panel,
            target_z=z_star,
            tolerance=settings.tolerance,
            rule=settings.screening,
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
        rec = record_measurement(rec, a, target_z=z_star, tolerance=settings.tolerance)
        out.append(rec.replace(lineage=json.dumps(annotation_lineage(a) | {"cost": a.cost()})))
    return out


def test_refinement_measures_only_finalists_with_fresh_trials_and_finds_the_closest(tmp_path):
    z_star = 0.5
    truth = {"near": 0.503, "close": 0.52, "far": 0.45, "off": 0.9}
    settings = fill_settings({"fill": {"tolerance": 0.01}})
    rule = settings.refine
    assert settings.screening.max_trials == rule.screen_trials == 8
    backend = RecordingPanel({k: b_of_z(CAL, z) for k, z in truth.items()})
    panel = _panel(tmp_path, backend)
    records = _screened(panel, settings, truth, z_star)
    screened = {r.candidate: r for r in records}
    assert json.loads(screened["off"].lineage or "{}")["decision"] == "off-target"
    ctx = Context(  # only what the refinement reads
        benchmark="toy",
        settings=settings,
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
    assert max(backend.samples["off"]) < settings.screening.max_trials
    extra = {k: json.loads(r.lineage or "{}").get("refinement", {}) for k, r in out.items()}
    n_models = len(panel.models)
    for k in ("near", "close", "far"):
        spent = extra[k].get("trials_per_model", 0)
        assert spent % rule.batch == 0 and spent <= rule.max_trials
        assert out[k].n_trials == screened[k].n_trials + spent * n_models  # pooled counts
        # refinement trials are fresh: indices from adaptive.max_trials on, never the screening's
        fresh = {i for i in backend.samples[k] if i >= settings.screening.max_trials}
        first = settings.adaptive.max_trials
        assert fresh == set(range(first, first + spent))
    assert extra["near"]["trials_per_model"] > 0
    # the child closest on the truth is the one selected, and known to the tolerance
    best = select(list(out.values()), z_star)
    assert best is not None and best.candidate == "near"
    lineage = json.loads(best.lineage or "{}")
    assert abs(float(best.z or 0) - z_star) <= settings.tolerance
    assert lineage["se_z"] < json.loads(screened["near"].lineage or "{}")["se_z"] / 2
    # it stopped only once the leader was expected within tolerance/2 (or out of budget)
    calibrated = [r for k, r in out.items() if r.z is not None and k != "off"]  # refine's pool
    esd = expected_sq_dev(best, z_star, _prior(calibrated))
    spent_all = extra["near"]["trials_per_model"] == rule.max_trials
    assert esd <= (settings.tolerance / 2) ** 2 or spent_all
    # confirmation trials start past every index screening and refinement can use
    assert settings.confirm_first_sample == settings.adaptive.max_trials + rule.max_trials


def test_refine_settings():
    d = fill_settings({})
    assert d.refine.enabled and d.confirm_first_sample == 32 + d.refine.max_trials
    off = fill_settings({"fill": {"refine": {"finalists": 0}}})
    assert not off.refine.enabled
    assert off.screening == off.adaptive and off.confirm_first_sample == off.adaptive.max_trials
    capped = fill_settings({"fill": {"refine": {"screen_trials": 64}}})
    assert capped.screening.max_trials == capped.adaptive.max_trials  # never past adaptive's
    assert dataclasses.replace(d, refine=off.refine).fingerprint_dict() != d.fingerprint_dict()
    for bad, where in [
        ({"refine": {"batch": 8, "max_trials": 20}}, "fill.refine.max_trials"),
        ({"refine": {"depth": 1}}, "fill.refine"),
        ({"refine": {"screen_trials": 0}}, "fill.refine.screen_trials"),
    ]:
        with pytest.raises(ConfigError, match=where.replace(".", r"\.")):
            fill_settings({"fill": bad})
