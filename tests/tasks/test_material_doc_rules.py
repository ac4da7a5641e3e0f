"""docs/material.md rules that no other test held (an audit broke each in a copy):
genres and their modes, the query syntax's edges, free-text columns, E2E beta of
1S, a bad first line reported alone, the first three of what is missing."""
import pytest

from shareval.formats.errors import InvalidInput, Problems
from shareval.formats.material import parse_query, read_pack
from shareval.tasks import get
from tests.tasks.test_material import DOCS, SYSTEM, folder, make_pack, output


@pytest.fixture
def pack(tmp_path):
    return make_pack(tmp_path / "pack")


def _genres(pack, genres):
    (pack / "documents.tsv").write_text(
        "doc_id\tgenre\n" + "".join(f"{d}\t{g}\n" for d, g in zip(DOCS, genres)))


def test_tb_is_speech_and_bc_is_text(pack, tmp_path):
    # material.md, genre and mode: TB (topical broadcast) speech, BC (blog) text, any case
    _genres(pack, ["TB", "tb", "BC", "Bc", "bc", "NW"])
    r = get("material-clir").score(pack, folder(tmp_path, {f"{q}.tsv": s
                                                           for q, s in SYSTEM.items()}))
    modes = r.breakdowns["per_mode"]
    assert (modes["speech"]["documents"], modes["text"]["documents"]) == (2, 4)


@pytest.mark.parametrize("genre", ["CS", "conversational", "Conversational-Speech",
                                   "speech-conversational"])
def test_every_spelling_of_conversational_speech_is_kept_out_of_domainid(pack, tmp_path, genre):
    # material.md, documents.tsv: "genre CS (or conversational) marks conversational speech"
    _genres(pack, ["NW"] * 5 + [genre])
    listed = output([0] * 6, ["0.1"] * 6)
    with pytest.raises(InvalidInput) as e:
        get("material-domainid").validate(folder(tmp_path, {"GOV.tsv": listed,
                                                            "MIL.tsv": listed}), reference=pack)
    assert [p.line for p in e.value.problems] == [6, 6]
    assert "conversational speech documents are not scored" in str(e.value.problems[0])


@pytest.mark.parametrize("text,parsed", [
    ("time:limit:Lifestyle", ("time:limit", "Lifestyle")),        # split at the last colon
    ("[ebola]:Lifestyle", ("[ebola]", "Lifestyle")),                # brackets (plan 7.1)
    ("\u201cebola virus\u201d:Lifestyle", ("\u201cebola virus\u201d", "Lifestyle")),
    ("ebola:Lifestyle,Government-And-Politics", ("ebola", "Lifestyle,Government-And-Politics")),
])
def test_query_syntax_edges(text, parsed):
    assert parse_query(text) == parsed


def test_free_text_query_columns_are_not_breakdowns(pack, tmp_path):
    # material.md: extra columns become breakdowns, except instructions and description
    (pack / "queries.tsv").write_text(
        "query_id\tquery\ttype\tdescription\tinstructions\n"
        "query1\tebola:Physical-And-Mental-Health\tlexical\tthe disease\tjudge strictly\n"
        'query2\t"panel of judges":Government-And-Politics\tconceptual\ta panel\tany panel\n'
        "query3\tmusic:Lifestyle\tlexical\tmusic\tany genre\n")
    r = get("material-clir").score(pack, folder(tmp_path, {f"{q}.tsv": s
                                                           for q, s in SYSTEM.items()}))
    assert "per_type" in r.breakdowns
    assert not {"per_description", "per_instructions"} & set(r.breakdowns)


@pytest.mark.parametrize("language,clir,e2e", [("1A", 20.0, 59.9), ("1B", 20.0, 59.9),
                                               ("1S", 40.0, 40.0)])
def test_beta_of_both_tasks_per_language(pack, language, clir, e2e):
    # material.md / plan Table 1
    (pack / "pack.yaml").write_text(f"language: {language}\ndocid_pattern: false\n")
    p = read_pack(pack, Problems())
    assert (p.beta("clir"), p.beta("e2e")) == (clir, e2e)


def test_a_file_with_a_bad_first_line_is_reported_alone_and_the_others_checked(pack, tmp_path):
    # material.md: an output file whose first line has the wrong number of fields is
    # reported alone (not its other lines' problems); the other files are still checked
    bad_first = f"{DOCS[0]}\tY\r\n" + SYSTEM["query1"].split("\n", 1)[1]
    high = SYSTEM["query3"].replace("\t0.45\n", "\t2.0\n")
    sub = folder(tmp_path, {"query1.tsv": bad_first, "query2.tsv": SYSTEM["query2"],
                            "query3.tsv": high})
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(sub, reference=pack)
    assert [(p.file.rsplit("/", 1)[-1], p.line, p.field) for p in e.value.problems] == [
        ("query1.tsv", 1, "line"), ("query3.tsv", 5, "ConfidenceFactor")]


def test_what_is_missing_is_counted_with_the_first_three(pack, tmp_path):
    # material.md: missing files and documents are one line each, count and first three
    (pack / "queries.tsv").write_text(
        "query_id\tquery\n" + "".join(f"query{i}\tebola:Lifestyle\n" for i in range(1, 6)))
    for i in (4, 5):
        (pack / "clir" / f"query{i}.tsv").write_text((pack / "clir" / "query2.tsv").read_text())
    sub = folder(tmp_path, {"query1.tsv": output([1, 0], ["0.9", "0.1"], DOCS[:2])})
    with pytest.raises(InvalidInput) as e:
        get("material-clir").validate(sub, reference=pack)
    text = [str(p) for p in e.value.problems]
    assert any("4 collection documents are missing" in t and
               all(repr(d) in t for d in DOCS[2:5]) and repr(DOCS[5]) not in t for t in text), text
    assert any("4 files are missing" in t and "'query2.tsv', 'query3.tsv', 'query4.tsv'" in t
               and "query5" not in t for t in text), text
