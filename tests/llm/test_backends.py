"""The backend registry: one table of ``backend:`` values that every stage asks."""

from __future__ import annotations

import asyncio
from typing import get_args

import pytest

from curation.llm import (
    BACKEND_KINDS,
    BACKENDS,
    BackendName,
    LLMSettings,
    PanelModel,
    SimulatedBackend,
    backend_for,
    backend_kind,
)


def test_the_registry_names_every_backend_the_params_accept() -> None:
    assert tuple(BACKEND_KINDS) == BACKENDS
    assert set(BACKEND_KINDS) == set(get_args(BackendName))
    assert {n for n, k in BACKEND_KINDS.items() if k.simulated} == {"simulate"}
    assert all(k.name == n for n, k in BACKEND_KINDS.items())


def test_an_unknown_backend_is_named_with_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="'replay' is not one of simulate, openai"):
        backend_kind("replay")
    with pytest.raises(ValueError, match="'replay' is not one of"):
        backend_for("replay", [], LLMSettings(), simulate=lambda: pytest.fail("built"))


def test_simulate_builds_the_callers_simulation_and_openai_an_endpoint_client() -> None:
    model = PanelModel(name="m", model_id="m", base_url_env="B_URL", api_key_env="B_KEY")
    sim = SimulatedBackend(benchmark="b", truths={}, abilities={"m": 0.0}, seed=0)
    assert backend_for("simulate", [model], LLMSettings(), simulate=lambda: sim) is sim
    assert sim.name == backend_kind("simulate").answered_by

    async def real() -> str:
        backend = backend_for(
            "openai",
            [model],
            LLMSettings(),
            simulate=lambda: pytest.fail("simulation built for openai"),
            environ={"B_URL": "http://127.0.0.1:9/v1", "B_KEY": "EMPTY"},
        )
        try:
            return backend.name
        finally:
            await backend.aclose()

    assert asyncio.run(real()) == backend_kind("openai").answered_by == "openai"
