"""Graders: numbers in every common notation, letters, exact literals, regex, code skipped."""

from __future__ import annotations

from fractions import Fraction

import pytest

from curation.errors import ConfigError
from curation.grading import (
    GradingSettings,
    extract_choice,
    extract_numeric,
    grade,
    last_boxed,
    parse_number,
)
from curation.params_model import validate_params
from tests.conftest import minimal_benchmark


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("18", Fraction(18)),
        ("-15", Fraction(-15)),
        ("1,234", Fraction(1234)),
        ("1,234,567.5", Fraction(2469135, 2)),
        ("1\\,000", Fraction(1000)),
        ("1{,}000", Fraction(1000)),
        ("1 000", Fraction(1000)),
        ("$18", Fraction(18)),
        ("\\$18.", Fraction(18)),
        ("18 dollars", Fraction(18)),
        ("18\\text{ dollars}", Fraction(18)),
        ("12 cm^2", Fraction(12)),
        ("50%", Fraction(50)),
        ("50\\%", Fraction(50)),
        ("\\frac{3}{4}", Fraction(3, 4)),
        ("\\dfrac{3}{4}", Fraction(3, 4)),
        ("-\\frac{1}{2}", Fraction(-1, 2)),
        ("\\frac12", Fraction(1, 2)),
        ("3/4", Fraction(3, 4)),
        ("0.75", Fraction(3, 4)),
        (".5", Fraction(1, 2)),
        ("x = 5", Fraction(5)),
        ("\u22123", Fraction(-3)),
        ("1e3", Fraction(1000)),
    ],
)
def test_parse_number_reads_common_notations(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["5\\sqrt{2}", "2^{10}", "1,5", "1 2", "5 pi", "abc", "", "(1,2)"])
def test_parse_number_refuses_what_is_not_one_number(text):
    assert parse_number(text) is None


def test_boxed_is_balanced_and_last_wins():
    text = "first \\boxed{1} then \\boxed{\\frac{a}{b}} done"
    assert last_boxed(text) == "\\frac{a}{b}"
    assert last_boxed("no box") is None


@pytest.mark.parametrize(
    ("output", "reference", "correct"),
    [
        ("so \\boxed{\\frac{3}{4}}", "0.75", True),
        ("so \\boxed{0.75}", "\\frac{3}{4}", True),
        ("The answer is $1,234.", "1234", True),
        ("#### 2,125", "2,125", True),
        ("We get 18 dollars.\n", "18", True),
        ("steps 12 and 7 give 19", "18", False),
        ("\\boxed{70000001}", "70000000", False),  # integers compare exactly
        ("\\boxed{0.33333}", "1/3", True),  # non-integers within 1e-4
        ("\\boxed{0.33}", "1/3", False),
        ("\\boxed{-221_{3}}", "-221_3", True),  # not a number: normalised math text
        ("no number at all", "5", False),
    ],
)
def test_numeric_grading(output, reference, correct):
    g = grade(output, reference, "numeric")
    assert g.correct is correct
    assert g.method == "numeric"


def test_every_grade_keeps_the_extracted_answer():
    g = grade("Reasoning... The answer is \\boxed{1,234}.", "1234", "numeric")
    assert g.extracted == "1,234" and g.correct
    assert extract_numeric("a 3 b 4 c") == "4"


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("The answer is (B).", "B"),
        ("Answer: C", "C"),
        ("\\boxed{D}", "D"),
        ("\\boxed{\\text{(A)}}", "A"),
        ("I think it is B.\nAnswer: D", "D"),
        ("(C)", "C"),
        ("The answer is a number", None),  # the article "a" is not option A
        ("I am not sure", None),
        ("Answer: F", None),  # only 4 options
    ],
)
def test_choice_letter_extraction(output, letter):
    assert extract_choice(output, 4) == letter


@pytest.mark.parametrize(
    ("reference", "choices"),
    [("B", None), ("(b)", None), ("1", ["x", "y", "z"]), ("y", ["x", "y", "z"])],
)
def test_choice_reference_may_be_letter_index_or_text(reference, choices):
    assert grade("Answer: B", reference, "choice", choices=choices).correct
    assert not grade("Answer: A", reference, "choice", choices=choices).correct


def test_choice_by_option_text():
    assert grade("[ANSWER]Paris[/ANSWER]", "B", "choice", choices=["Rome", "Paris"]).correct


@pytest.mark.parametrize(
    ("output", "reference", "correct"),
    [
        ("[ANSWER][1,2][/ANSWER]", "[1, 2]", True),  # equal Python literals
        ("[ANSWER]'           '[/ANSWER]", "'           '", True),  # whitespace inside kept
        ("[ANSWER]' '[/ANSWER]", "'           '", False),
        ("Answer: **Paris**.", "paris", True),
        ("[ANSWER]1[/ANSWER]", "'1'", False),  # int is not str
        ("<answer>Blue whale</answer>", "blue  whale", True),
    ],
)
def test_exact_grading(output, reference, correct):
    assert grade(output, reference, "exact").correct is correct


def test_regex_grader_uses_the_pattern_group():
    settings = GradingSettings(method="regex", pattern=r"RESULT=(\S+)")
    g = grade("x RESULT=41 then RESULT=42", "42", "exact", settings=settings)
    assert (g.correct, g.extracted, g.method) == (True, "42", "regex")
    assert grade("nothing", "42", "exact", settings=settings).correct is False


def _grading(raw: dict) -> GradingSettings:
    entry = minimal_benchmark("b") | {"grading": raw}
    return validate_params({"benchmarks": {"b": entry}}).benchmarks["b"].grading


def test_grading_settings_are_checked_when_params_are_read():
    assert _grading({}) == GradingSettings()
    assert (GradingSettings().rel_tol, GradingSettings().abs_tol) == (1e-4, 1e-9)
    assert _grading({"method": "regex", "pattern": "A=(\\d+)"}).pattern == "A=(\\d+)"
    with pytest.raises(ConfigError, match=r"benchmarks.b.grading.pattern: the regex grader needs"):
        _grading({"method": "regex"})
    with pytest.raises(ConfigError, match=r"benchmarks.b.grading.method"):
        _grading({"method": "fuzzy"})
    with pytest.raises(ConfigError, match=r"grading.pattern: not a valid regular expression"):
        _grading({"method": "regex", "pattern": "A=("})
    with pytest.raises(ConfigError, match=r"grading.rel_tol"):
        _grading({"rel_tol": -1.0})
    with pytest.raises(ConfigError, match=r"grading.tolerance: unknown setting"):
        _grading({"tolerance": 0.1})


class _Recorder:
    def __init__(self):
        self.calls = []

    def check(self, program, *, reference, item):
        self.calls.append(program)
        return "return" in program


def test_code_is_never_run_without_sandbox():
    out = "```python\nimport os; os.system('touch pwned')\n```"
    g = grade(out, None, "code")
    assert g.correct is None and g.skipped and "sandbox" in g.skipped
    assert "os.system" in g.extracted
    sandbox = _Recorder()
    assert grade("```python\ndef f():\n    return 1\n```", None, "code", sandbox=sandbox).correct
    assert len(sandbox.calls) == 1


def test_free_form_is_skipped():
    g = grade("an essay", "ref", "free")
    assert g.correct is None and g.method == "skip"


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("\\sqrt{117}", "3\\sqrt{13}"),
        ("\\frac{\\pi}{2}", "\\pi/2"),
        ("2\\sqrt{2}", "\\sqrt{8}"),
        ("x+1", "1+x"),
    ],
)
def test_symbolic_equivalence_through_math_verify(answer, reference):
    assert grade(f"So \\boxed{{{answer}}}.", reference, "numeric").correct is True


@pytest.mark.parametrize(
    ("answer", "reference"), [("\\sqrt{117}", "2\\sqrt{13}"), ("\\pi", "3.14"), ("x-1", "1-x")]
)
def test_symbolic_inequivalence_is_wrong(answer, reference):
    assert grade(f"\\boxed{{{answer}}}", reference, "numeric").correct is False


def test_truncated_output_is_graded_only_on_an_explicit_answer():
    from curation.grading import TRUNCATED

    cut = "First 12 apples, then 5 more, so 17 so far and then"
    assert grade(cut, "17", "numeric").correct is True  # the fallback guesses when not cut
    g = grade(cut, "17", "numeric", truncated=True)
    assert g.correct is None and g.skipped == TRUNCATED and g.extracted is None
    assert grade("The answer is 17. Check: 12", "17", "numeric", truncated=True).correct
    assert grade("\\boxed{17} and more", "17", "numeric", truncated=True).correct
    assert grade("It might be", "yes", "exact", truncated=True).skipped == TRUNCATED
    assert grade("Answer: B. Because", "B", "choice", truncated=True).correct is True
    assert grade("Option (B) looks", "B", "choice", truncated=True).correct is None


def test_an_empty_extraction_is_no_answer():
    g = grade("I give up \\boxed{}", "17", "numeric")
    assert g.extracted is None and g.correct is False
