"""The card's citation, source_datasets, repository id, Uses and Limitations, read back
the way a Hub user's tools read them (``huggingface_hub.DatasetCard``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from fake_hub import FakeHub
from huggingface_hub import DatasetCard
from publish_project import MODELS, N_ITEMS, hub_env, params, run_publish, run_subsets_and_build

from curation.publish._card import METHOD_BIBTEX, PLACEHOLDER_REPO

BIBTEX = "@article{toy2026,\n  title={A Toy Benchmark},\n  author={Doe, Jane},\n  year={2026}\n}\n"
REPO = "bench-org/toy-benchfill"


def _add_card_keys(project: Path) -> None:
    p = params(project)
    p["benchmarks"]["toy"]["citation"] = BIBTEX
    p["benchmarks"]["toy"]["source_datasets"] = ["example-org/toy"]
    (project / "params.yaml").write_text(yaml.safe_dump(p, sort_keys=False))


def test_card_reads_back_with_citation_sources_and_repo_id(project: Path):
    _add_card_keys(project)
    run_subsets_and_build(project, repo_id="bench-org/{benchmark}-benchfill")
    card = DatasetCard.load(project / "dist/toy/toy-1.0.0/README.md")
    assert card.data.source_datasets == ["example-org/toy"]
    text = card.text
    assert f'load_dataset("{REPO}", "original"' in text and PLACEHOLDER_REPO not in text
    citation = text.split("## Citation", 1)[1]
    assert BIBTEX.strip() in citation and METHOD_BIBTEX in citation
    assert citation.count("```bibtex") == 2
    uses = text.split("## Uses", 1)[1].split("\n## ", 1)[0]
    assert f"a panel of {len(MODELS)} models" in uses and "`calibrated-uniform-12`" in uses
    limits = text.split("## Limitations", 1)[1].split("\n## ", 1)[0]
    # facts of this build: the panel's ends by name, item counts, review and simulation
    assert f"`{MODELS[0]}`" in limits and f"`{MODELS[-1]}`" in limits
    assert "4.00 logits apart" in limits  # abilities -2 .. 2
    assert f"of {N_ITEMS} items sit at z = 0" in limits
    assert "0 simulated cells" in limits and "0 reviewed additions were offered" in limits


@pytest.mark.long(seconds=30)
def test_publish_records_the_repo_id_and_the_next_build_names_it(project: Path, hub: FakeHub):
    run_subsets_and_build(project)
    built = project / "dist/toy/toy-1.0.0"
    assert f'load_dataset("{PLACEHOLDER_REPO}"' in (built / "README.md").read_text()
    env = hub_env(hub.url, project)
    dry = run_publish(env, project, "toy", "--repo-id", REPO, "--version", "1.0.0", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"names {PLACEHOLDER_REPO}, not {REPO}" in dry.stderr  # told before it is published
    proc = run_publish(env, project, "toy", "--repo-id", REPO, "--version", "1.0.0")
    assert proc.returncode == 0, proc.stderr
    assert '"repo_id": "' + REPO in (project / "releases/toy.json").read_text()
    run_subsets_and_build(project)  # no build.repo_id: the release record names it
    card = DatasetCard.load(project / "dist/toy/toy-1.0.1/README.md")
    assert f'load_dataset("{REPO}", "original"' in card.text
