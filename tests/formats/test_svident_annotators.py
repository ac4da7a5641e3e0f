"""SV-Ident reference: per-annotator columns (is_variable@NAME, variable@NAME,
mention_type@NAME) are read strictly; every problem names file:line:field."""
import pytest

from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.svident import read_reference
from shareval.tasks import get
from tests.conftest import write

BASE = ["sentence", "is_variable", "variable", "research_data", "doc_id", "uuid", "lang"]


def ref_file(tmp_path, extra, rows):
    """``rows``: the extra columns' cells for sentences u1, u2 (u1 positive, v1)."""
    lines = ["\t".join(BASE + extra)]
    base = [["s", "1", "v1", "R", "d", "u1", "en"], ["s", "0", "", "R", "d", "u2", "en"]]
    lines += ["\t".join(b + r) for b, r in zip(base, rows)]
    return write(tmp_path / "ref.tsv", "\n".join(lines) + "\n")


def problems_of(path):
    problems = Problems()
    read_reference(path, problems)
    return sorted(str(p) for p in problems.items)


TWO = ["is_variable@A1", "variable@A1", "is_variable@A2", "variable@A2"]


def test_two_complete_annotators_are_read(tmp_path):
    path = ref_file(tmp_path, TWO + ["mention_type@A1", "mention_type@A2"],
                    [["1", "v1;unk", "1", "v1;v2", "Explicit", "implicit"],
                     ["0", "", "1", "unk", "", "mixed"]])
    problems = Problems()
    ref = read_reference(path, problems)
    assert not problems
    assert ref.annotators == ["A1", "A2"] and ref.annotator_types
    u1, u2 = ref.sentences["u1"].annotations, ref.sentences["u2"].annotations
    assert (u1["A1"].is_variable, u1["A1"].variables, u1["A1"].mention_type) == \
        (1, ["v1"], "explicit")                      # 'unk' removed, type lower-cased
    assert u1["A2"].variables == ["v1", "v2"]
    assert (u2["A1"].is_variable, u2["A1"].variables, u2["A1"].mention_type) == (0, [], None)
    assert (u2["A2"].is_variable, u2["A2"].variables) == (1, [])   # 1 with only 'unk': allowed


@pytest.mark.parametrize("extra", [[], ["note@x"]])
def test_without_annotator_columns_nothing_changes(tmp_path, extra):
    """No annotator column: an unrelated column with '@' is ignored like any extra column
    (a typo beside real annotator columns is a problem, below)."""
    path = ref_file(tmp_path, extra, [["n"] * len(extra)] * 2)
    problems = Problems()
    ref = read_reference(path, problems)
    assert not problems
    assert ref.annotators == [] and not ref.annotator_types
    assert all(s.annotations == {} for s in ref.sentences.values())


@pytest.mark.parametrize("extra, message", [
    (["is_variable@A1", "is_variable@A2", "variable@A2"],
     "1: header: annotator 'A1': column variable@A1 missing (is_variable@A1 given); every "
     "annotator needs is_variable@NAME and variable@NAME"),
    (["variable@A1", "is_variable@A2", "variable@A2"],
     "1: header: annotator 'A1': column is_variable@A1 missing (variable@A1 given); every "
     "annotator needs is_variable@NAME and variable@NAME"),
    (["is_variable@A1", "variable@A1"],
     "1: header: per-annotator columns name one annotator ('A1'); they need two or more"),
    (TWO + ["mention_type@A1"],
     "1: header: mention_type@NAME for annotator(s) A1 but not A2: give it for every "
     "annotator or none"),
    (TWO + ["is_variable@"], "1: header: column 'is_variable@': no annotator name after '@'"),
    (TWO + ["label@A1"], "1: header: column 'label@A1': per-annotator columns are "
                         "is_variable@NAME, variable@NAME, mention_type@NAME"),
    (TWO + ["IS_VARIABLE@A1"], "1: header: column 'IS_VARIABLE@A1' repeats 'is_variable@A1'"),
])
def test_incomplete_or_unknown_annotator_columns(tmp_path, extra, message):
    cells = {"is_variable": "0", "variable": "", "mention_type": ""}
    row = [cells.get(h.split("@")[0].lower(), "0") for h in extra]
    path = ref_file(tmp_path, extra, [row, row])
    assert problems_of(path) == [f"{path}:{message}"]


@pytest.mark.parametrize("row, message", [
    (["2", "", "0", ""], "3: is_variable@A1: expected 0 or 1, found '2'"),
    (["0", "", "", ""], "3: is_variable@A2: expected 0 or 1, found ''"),
    (["0", "v1", "0", ""], "3: variable@A1: is_variable@A1 is 0 but the annotator lists "
                           "variables"),
    (["0", "", "0", "", "", "both"], "3: mention_type@A2: expected explicit, implicit, mixed "
                                     "or empty, found 'both'"),
    (["0", "", "0", "", "explicit", ""], "3: mention_type@A1: is_variable@A1 is 0 but the "
                                         "annotator gives a mention type"),
])
def test_bad_annotator_cells_name_line_and_field(tmp_path, row, message):
    extra = TWO + (["mention_type@A1", "mention_type@A2"] if len(row) > 4 else [])
    ok = ["1", "v1", "1", "v1"] + (["", ""] if len(row) > 4 else [])
    path = ref_file(tmp_path, extra, [ok, row])
    assert problems_of(path) == [f"{path}:{message}"]


def test_scoring_with_a_bad_reference_is_a_clear_error(tmp_path):
    path = ref_file(tmp_path, TWO, [["1", "v1", "yes", "v1"], ["0", "", "0", ""]])
    sub = write(tmp_path / "sub.json", '{"u1": 1, "u2": 0}')
    with pytest.raises(InvalidInput) as e:
        get("svident-detection").score(path, sub)
    assert [str(p) for p in e.value.problems] == \
        [f"{path}:2: is_variable@A2: expected 0 or 1, found 'yes'"]
