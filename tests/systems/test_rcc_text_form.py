"""RCC reads a publication in the form its training texts had: lines of which more than
a tenth of the characters are digits are dropped (``text.drop_digit_lines``, applied by
``rcc.prepare_text`` in ``find_citations`` and in training). That a dataset named only
in such a line is not reported is tested beside the reference-list rule
(test_rcc_reference_rule.py), with its fixtures."""
from shareval.systems import rcc
from shareval.systems.text import drop_digit_lines


def test_a_line_with_more_than_a_tenth_digits_is_dropped_and_one_with_a_tenth_kept():
    kept = "a" * 18 + "12"          # 2 of 20 characters: exactly a tenth
    dropped = "a" * 17 + "123"      # 3 of 20
    assert drop_digit_lines(f"{kept}\n{dropped}\nno digits") == f"{kept}\nno digits"
    assert drop_digit_lines(dropped, share=0.15) == dropped
    assert drop_digit_lines("") == ""
    # empty lines stay (paragraphs), and '¼', which PDF fonts give for '=', is no digit
    assert drop_digit_lines("x\n\ny \u00bc z") == "x\n\ny \u00bc z"
    assert drop_digit_lines("x\n\ny \u00bc 3.1") == "x\n"


def test_prepare_text_drops_digit_lines_before_joining_hyphenated_words():
    raw = "we use the Panel Study of In-\ncome Dynamics\nTable 2 1998 2004 12.5 13.7 99\n"
    assert rcc.prepare_text(raw) == "we use the Panel Study of Income Dynamics\n"
    assert rcc.prepare_text(raw) != rcc.normalize(raw)
