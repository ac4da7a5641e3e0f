"""Formula escaping of CSV text cells: never a formula, always undone exactly."""
from hypothesis import given, strategies as st

from shareval.formats.spreadsheet import FORMULA_START, escape_formula, unescape_formula

texts = st.text(alphabet=st.sampled_from(list("=+-@\t\r\n'ab ,\"")), max_size=8) | st.text()


@given(texts)
def test_escaped_text_never_starts_a_formula_and_round_trips(text):
    out = escape_formula(text)
    assert not out.startswith(FORMULA_START)
    assert unescape_formula(out) == text
    if not text.lstrip("'").startswith(FORMULA_START):
        assert out == text                      # ordinary text is left as it is


@given(st.floats(allow_nan=False) | st.integers() | st.none())
def test_non_text_is_unchanged(value):
    assert escape_formula(value) == value
