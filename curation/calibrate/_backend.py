"""The panel that measures new items: the seeded simulation or real endpoints."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from curation.calibrate._annotate import Child, Panel
from curation.calibrate._setup import PanelSetup
from curation.calibrate._simulate import latent_of, register_child
from curation.calibrate._world import SimulatedWorld, WorldBackend
from curation.llm import CompletionCache, PanelModel, SimulatedBackend, backend_for

LatentB = Callable[[Child], float]
"""Simulation: the latent difficulty a child is answered from."""


def stated_latent(child: Child) -> float:
    """The latent b a simulated child's question header states (BenchFill's children)."""
    latent = latent_of(child.question)
    if latent is None:
        raise ValueError(f"simulated child {child.item} states no latent b")
    return latent


def open_panel(
    setup: PanelSetup,
    *,
    cache: CompletionCache,
    latent: LatentB = stated_latent,
    also_serve: Sequence[PanelModel] = (),
    environ: Mapping[str, str] | None = None,
    world: SimulatedWorld | None = None,
    direct: bool = False,
) -> Panel:
    """The panel that measures new items on ``setup``'s calibration (``await panel.aclose()``).

    ``calibrate.backend: simulate`` — a :class:`curation.llm.SimulatedBackend` with the
    calibration's abilities and ``calibrate.seed``; each child is registered before it is
    asked, at ``latent(child)`` (default: the b its simulated question header states),
    and everything it answers says ``source = simulated``. ``openai`` — one
    :class:`curation.llm.OpenAIBackend` for the panel models, plus ``also_serve``
    (e.g. BenchFill's rewriter, so it shares the connection pools). Call it inside the
    event loop that will use it.

    ``world`` (simulation only): the panel answers from the world's truth
    (:class:`~curation.calibrate.WorldBackend`: true abilities, a 2PL with model × item
    effects) instead of the calibration's own 1PL. ``direct`` (simulation only): the
    same seeded draws without prompts, cache or grading — what the fill stage and the
    benchmarks use, so simulated panel answers never fill the completion cache.
    """
    settings, models = setup.settings, list(setup.panel)
    served = models + [m for m in also_serve if m.name not in {s.name for s in models}]
    backend = backend_for(
        setup.backend,
        served,
        setup.llm,
        simulate=lambda: (
            WorldBackend(benchmark=setup.benchmark, world=world, seed=settings.seed)
            if world is not None
            else SimulatedBackend(
                benchmark=setup.benchmark,
                truths={},
                abilities={m.name: setup.calibration.abilities[m.name] for m in models},
                seed=settings.seed,
            )
        ),
        environ=environ,
    )
    register: Callable[[Child], None] | None = None
    if isinstance(backend, SimulatedBackend):
        simulated = backend

        def register(child: Child) -> None:
            register_child(
                simulated,
                child.item,
                answer=child.answer,
                answer_type=child.answer_type,
                choices=child.choices,
                latent_b=latent(child),
            )

    return Panel(
        models=tuple(models),
        backend=backend,
        cache=cache,
        collect=setup.collect.model_copy(update={"seed": settings.seed, "progress": False}),
        llm=setup.llm,
        calibration=setup.calibration,
        benchmark=setup.benchmark,
        grading=setup.grading,
        register=register,
        direct=direct and isinstance(backend, SimulatedBackend),
    )
