"""The rewriter's "answer changed without saying" rule (curation.fill._validity)."""

from __future__ import annotations

import pytest

from curation.fill._validity import says_what_changed, unsaid_answer_change

PARENT = "Tom has 3 apples and buys 4 more. How many apples does he have?"


@pytest.mark.parametrize(
    "change", [None, "", "none", "None.", "As the parent.", "unchanged", "No changes made", "-"]
)
def test_a_change_line_that_states_nothing(change):
    assert not says_what_changed(change)
    assert says_what_changed("he now eats 4 instead of buying them")


def test_same_numbers_new_answer_no_stated_change_is_a_failure():
    why = unsaid_answer_change(PARENT, "7", PARENT, "8", "numeric", None)
    assert why is not None and why.startswith("answer changed without saying: '7' -> '8'")
    # a reworded question with the parent's numbers does not explain a new answer either
    reworded = "Tom owns 3 apples; he buys 4 more. How many apples now?"
    assert unsaid_answer_change(PARENT, "7", reworded, "12", "numeric", "As the parent.")


@pytest.mark.parametrize(
    ("question", "answer", "change"),
    [
        (PARENT, "7.0", None),  # same value, other form: not a change
        (PARENT.replace("4 more", "5 more"), "8", None),  # a constant changed: expected
        ("Tom has 3 apples and eats 4 of them... no: eats 2. Left?", "1", None),  # numbers differ
        (PARENT.replace("buys", "loses"), "-1", "buys -> loses"),  # stated in the change line
    ],
)
def test_explained_or_equal_answers_pass(question, answer, change):
    assert unsaid_answer_change(PARENT, "7", question, answer, "numeric", change) is None


def test_latex_answers_compare_by_value():
    q = "What is $\\sqrt{117}$ in simplest form?"
    assert unsaid_answer_change(q, "\\sqrt{117}", q, "3\\sqrt{13}", "numeric", None) is None
    assert unsaid_answer_change(q, "\\frac{1}{2}", q, "0.5", "numeric", None) is None
    assert unsaid_answer_change(q, "\\frac{1}{2}", q, "\\frac{1}{3}", "numeric", None)


# ---- reading real rewriter text (patterns seen in tests/fixtures/real_llm/) ----------------


def test_latex_read_as_json_escapes_is_put_back():
    from curation.grading import restore_latex

    # one backslash: JSON decodes \f \b \t \r \n
    raw = '{"a": "\\frac{1}{2} \\times \\binom{5}{2} \\right) \\neq 1", "b": "x\\ny\\tz"}'
    import json

    got = restore_latex(json.loads(raw))
    assert got["a"] == "\\frac{1}{2} \\times \\binom{5}{2} \\right) \\neq 1"
    assert got["b"] == "x\ny\tz"  # real newlines and tabs stay


def test_rewrite_with_invalid_latex_escapes_is_repaired():
    from curation.fill._parse import Rewrite, parse_rewrite

    text = '```json\n{"question": "Solve \\(x^2=4\\), x>0.", "answer": "\\sqrt{4}"}\n```'
    got = parse_rewrite(text, answer_type="numeric")
    assert isinstance(got, Rewrite) and got.repaired
    assert got.question == "Solve \\(x^2=4\\), x>0." and got.answer == "\\sqrt{4}"


def test_cut_off_rewrite_is_kept_only_if_the_cut_is_in_change():
    from curation.fill._parse import CUT_MARK, ParseFailure, Rewrite, parse_rewrite

    head = '{"question": "What is 3 + 5?", "answer": "8", "answer_type": "numeric", '
    got = parse_rewrite(
        head + '"change": "I added 2 and then I', answer_type="numeric", finish_reason="length"
    )
    assert isinstance(got, Rewrite) and got.change == "I added 2 and then I" + CUT_MARK
    cut = parse_rewrite(
        '{"question": "What is 3 + 5?", "answer": "1', answer_type="numeric", finish_reason="length"
    )
    assert isinstance(cut, ParseFailure) and cut.kind == "truncated"
    assert "inside 'answer'" in cut.reason and cut.question == "What is 3 + 5?"
    wrong_key = parse_rewrite(
        '{"problem": "What is 3 + 5?", "answer": 8 "answer_type": "numeric"}', answer_type="numeric"
    )
    assert isinstance(wrong_key, ParseFailure) and wrong_key.kind == "no_question"
