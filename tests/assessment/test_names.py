"""Output names with the format's separators survive a sample and a judgments file."""
from hypothesis import given, settings, strategies as st

from shareval.assessment.judgments import quote_name, read_judgments, unquote_name
from shareval.assessment.outputs import Output
from shareval.assessment.sample import draw_sample, overlaps_comment, sizes_comment, write_sample
from shareval.formats.errors import Problems

NAMES = ["Smith, Jones & Co", "A+B", "x=1", "100% sure", "%2C literal", "plain"]


@given(st.text(min_size=1, max_size=12))
@settings(max_examples=200)
def test_quote_round_trips_and_hides_every_separator(name):
    q = quote_name(name)
    assert unquote_name(q) == name
    assert not set(q) & set(",+=\n\r")


def test_unquote_leaves_other_percent_codes_as_written():
    assert unquote_name("50%20off%2c") == "50%20off,"


def test_sample_and_judgments_keep_names_with_separators(tmp_path):
    items = [f"d{i}|x{i}" for i in range(12)]
    outs = [Output(n, {k: k.split("|")[0] for k in items[i:i + 6]}) for i, n in enumerate(NAMES)]
    rows = draw_sample(outs, 8, seed=1)
    p = tmp_path / "sample.tsv"
    write_sample(rows, p, sizes=sizes_comment(outs) + "\n" + overlaps_comment(outs))
    lines = p.read_text().splitlines()
    header = lines.index(next(ln for ln in lines if ln.startswith("item")))
    body = [ln.split("\t") for ln in lines[header:]]
    body[0].append("answer")
    for r in body[1:]:
        r.append("yes")
    p.write_text("\n".join(lines[:header] + ["\t".join(r) for r in body]) + "\n")
    problems = Problems()
    j = read_judgments(p, problems)
    assert not problems.items, problems.items
    assert j.sizes == {o.name: len(o) for o in outs}
    expected = {tuple(sorted((a.name, b.name))): len(set(a.items) & set(b.items))
                for i, a in enumerate(outs) for b in outs[i + 1:]
                if set(a.items) & set(b.items)}
    assert j.overlaps == expected
    by_item = {r.item: set(r.submissions) for r in j.records}
    for r in rows:
        assert by_item[r.item] == set(r.submissions)
