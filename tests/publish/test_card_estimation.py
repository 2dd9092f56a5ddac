"""The build publishes ``estimate-<m>`` configs with their weights, and the card states
every subset's held-out estimation figures from the subsets stage's metrics (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import polars as pl
import yaml
from publish_project import run_subsets_and_build

from curation.publish import hf_features
from curation.schemas import validate_frame


def _with_estimation(root: Path) -> None:
    params = yaml.safe_load((root / "params.yaml").read_text())
    # 5 panel models: 2 folds (each calibrates on 2-3 models) is what this panel allows
    params["subsets"]["estimation"] = {"sizes": [20], "folds": 2, "draws": 200}
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def test_estimate_config_has_weights_and_the_card_states_the_metrics(project: Path):
    _with_estimation(project)
    run_subsets_and_build(project)
    out = project / "dist/toy/toy-1.0.0"
    shards = sorted((out / "data/estimate-20").glob("*.parquet"))
    frame = pl.read_parquet(shards[0])
    validate_frame(frame, "published_estimate_item", file=str(shards[0]))
    picked = pl.read_parquet(project / "data/subsets/toy/estimate-20.parquet")
    assert frame["item"].to_list() == picked["item"].to_list()
    assert frame["weight"].to_list() == picked["weight"].to_list()
    assert abs(frame["weight"].sum() - 1) < 1e-6
    disk = datasets.load_from_disk(str(out / "disk/estimate-20"))["test"]
    assert disk.features == hf_features("published_estimate_item")
    # the other configs keep the published record as it was (no weight column)
    assert "weight" not in pl.read_parquet(next((out / "data/original").glob("*.parquet"))).columns

    card = (out / "README.md").read_text()
    metrics = json.loads((project / "metrics/subsets/toy.json").read_text())
    blocks = {
        "calibrated-uniform-12": metrics["subsets"]["uniform-12"]["estimation"],
        "estimate-20": metrics["estimation"]["subsets"]["estimate-20"]["estimation"],
    }
    section = card.split("### Estimating the full score from a subset", 1)[1].split("\n## ", 1)[0]
    for config, block in blocks.items():
        assert "unavailable" not in block, block
        line = next(x for x in section.splitlines() if x.startswith(f"- `{config}`"))
        m = block["m"]
        assert (
            f"a score on this {m}-item subset estimates the full toy score within "
            f"{block['mae_pp']:.2f} pp on average (90% of models within "
            f"{block['p90_ae_pp']:.2f} pp" in line
        )
        assert f"{m} random items: {block['random']['mae_pp']:.2f} pp" in line
        assert ("**Worse than random:**" in line) == (not block["beats_random"])
    assert "| `estimate-20` | 20 |" in card  # listed among the configs
    assert "config_name: estimate-20" in card  # and in the Hub's metadata
