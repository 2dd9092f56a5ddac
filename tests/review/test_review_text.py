"""Item text helpers: math spans, the word diff, the panel table."""

from __future__ import annotations

from curation.review._text import DifficultyBar, panel_rows, segments, word_diff


def test_math_spans_and_dollar_amounts():
    segs = segments("Solve $x^2 = 4$ and \\(y\\); show $$\\frac{1}{2}$$ or \\[z\\].")
    maths = [(s.text, s.display) for s in segs if s.math]
    assert maths == [("x^2 = 4", False), ("y", False), ("\\frac{1}{2}", True), ("z", True)]
    assert not any(s.math for s in segments("It costs $5 and then $10 more."))
    assert not any(s.math for s in segments("Pay $ 3 or $4$5"))
    assert "".join(s.text for s in segments("a  b\n\nc")) == "a  b\n\nc"


def test_word_diff_marks_changed_words_and_whole_formulas():
    left, right = word_diff(
        "Tom has 3 apples and $x+1$ pears.", "Tom has 5 apples and $x+2$ pears."
    )
    assert [s.text for s in left if s.op == "del"] == ["3", "x+1"]
    assert [s.text for s in right if s.op == "ins"] == ["5", "x+2"]
    assert all(s.op == "eq" for s in right if s.text in ("Tom has ", " pears."))
    left, right = word_diff("one", "one two three")
    assert [s.text for s in right if s.op == "ins"] == ["two three"]  # one mark, inner space


def test_panel_and_bar():
    rows, problem = panel_rows('{"b": [1, 4], "a": [4, 4], "c": [0, 0]}')
    assert problem is None and [r.model for r in rows] == ["a", "b", "c"]
    assert panel_rows("not json")[1].startswith("panel is not valid JSON")
    assert panel_rows('{"a": 3}')[1] == "panel entry 'a' is not [n_correct, n_trials]"
    bar = DifficultyBar(target=0.6, z=0.58, low=0.5, high=0.66)
    assert bar.inside is True and round(bar.distance, 3) == 0.02
    assert bar.x(0) == bar.x0 and bar.x(1.5) == bar.x1


def test_deep_or_long_tex_is_shown_as_source_not_given_to_katex():
    from curation.review._text import MAX_MATH_DEPTH, segments

    deep = "x"
    for _ in range(300):  # the 300-deep \frac that froze a reviewer's tab
        deep = f"\\frac{{1}}{{{deep}}}"
    shown = segments(f"Compute ${deep}$ now.")
    assert not any(s.math for s in shown)
    assert "".join(s.text for s in shown) == f"Compute ${deep}$ now."
    ok = "x"
    for _ in range(MAX_MATH_DEPTH - 1):
        ok = f"\\frac{{1}}{{{ok}}}"
    assert [s.text for s in segments(f"Compute ${ok}$ now.") if s.math] == [ok]
    assert not any(s.math for s in segments("$" + "a+" * 1500 + "a$"))
