"""mirt's default pool leaves out a benchmark that shares no models with the others."""

from __future__ import annotations

from pipelines.mirt import left_out


def test_a_benchmark_without_shared_models_is_left_out_with_its_reason():
    sets = {"a": {"m1", "m2", "m3"}, "b": {"m1", "m2", "m3"}, "new": {"x", "y"}}
    assert left_out(sets) == {
        "new": "new: left out of the joint fit: no model in common with a, b "
        "(mirt.common_models: false pools it)"
    }


def test_ties_drop_the_newest_and_shared_pools_are_untouched():
    assert left_out({"a": {"m1", "m2"}, "b": {"m1", "m2"}}) == {}
    assert left_out({"a": {"m1", "m2"}, "b": {"m1", "m2"}, "c": {"m1", "m2", "z"}}) == {}
    # a shares 1 model with b and c; dropping any one leaves 1 common model... the newest goes
    sets = {"a": {"m1", "m2"}, "b": {"m2", "m3"}, "c": {"m2", "m4"}}
    out = left_out(sets)
    assert list(out) == ["c"]
    assert "only 1 model(s) in common with a, b" in out["c"]
    # two benchmarks are never pruned: the fit itself says why it cannot run
    assert left_out({"a": {"m1"}, "b": {"m2"}}) == {}
