"""rcc-mentions partial scores against an oracle written from the Kaggle 2021
evaluation page (tests/metrics/mention_oracle.py says how it follows that page).
"""
import json

import pytest
from hypothesis import given, settings, strategies as st

from shareval.formats.errors import InvalidInput
from shareval.tasks import get
from tests.conftest import write
from tests.metrics.mention_oracle import (_f_half, mention_sets, oracle_clean_unicode,
                                          oracle_kaggle, oracle_publication)

def _files(tmp_path, pubs, pipes=False):
    ref = [{"publication_id": p, "data_set_id": i, "score": 1.0, "mention_list": [g]}
           for p, (gold, _) in pubs.items() for i, g in enumerate(gold)]
    ref += [{"publication_id": p, "data_set_id": 99, "score": 1.0, "mention_list": []}
            for p, (gold, _) in pubs.items() if not gold]
    if pipes:      # one record per publication holding the whole PredictionString
        sub = [{"publication_id": p, "mention": "|".join(preds)}
               for p, (_, preds) in pubs.items() if preds]
    else:
        sub = [{"publication_id": p, "mention": m} for p, (_, preds) in pubs.items()
               for m in preds]
    return (write(tmp_path / "ref.json", json.dumps(ref)),
            write(tmp_path / "sub.json", json.dumps(sub)))


def _counts(r):
    return r.counts["partial_tp"], r.counts["partial_fp"], r.counts["partial_fn"]


@settings(max_examples=300, deadline=None)
@given(mention_sets(), st.booleans())
def test_kaggle_cleaning_equals_the_oracle(tmp_path_factory, pubs, pipes):
    ref, sub = _files(tmp_path_factory.mktemp("k"), pubs, pipes)
    r = get("rcc-mentions").score(ref, sub)
    rows = {p: "|".join(preds) for p, (_, preds) in pubs.items() if preds}
    tp, fp, fn, f05 = oracle_kaggle(rows, {p: g for p, (g, _) in pubs.items()})
    assert _counts(r) == (tp, fp, fn)
    assert r.metrics["partial_f0_5"] == pytest.approx(f05, abs=1e-9)
    assert r.conventions["cleaning"] == "kaggle"


@settings(max_examples=200, deadline=None)
@given(mention_sets(), st.sampled_from([0.3, 0.5, 2 / 3, 1.0]))
def test_unicode_cleaning_equals_the_oracle(tmp_path_factory, pubs, threshold):
    ref, sub = _files(tmp_path_factory.mktemp("u"), pubs)
    r = get("rcc-mentions").score(ref, sub, cleaning="unicode", jaccard=threshold)
    tot = [0, 0, 0]
    for gold, preds in pubs.values():
        for i, v in enumerate(oracle_publication(preds, gold, oracle_clean_unicode, threshold)):
            tot[i] += v
    assert _counts(r) == tuple(tot)
    assert r.metrics["partial_f0_5"] == pytest.approx(_f_half(*tot), abs=1e-9)


def test_prediction_string_split_at_pipes(tmp_path):
    ref = write(tmp_path / "ref.json", json.dumps(
        [{"publication_id": 1, "data_set_id": 5, "mention_list": ["ADNI", "NHANES"]}]))
    sub = write(tmp_path / "sub.json", json.dumps(
        [{"publication_id": 1, "mention": "ADNI|NHANES"}]))
    assert _counts(get("rcc-mentions").score(ref, sub)) == (2, 0, 0)
    # unicode: one prediction {adni, nhanes}, Jaccard 1/2 with "ADNI"
    assert _counts(get("rcc-mentions").score(ref, sub, cleaning="unicode")) == (1, 0, 1)


def test_gold_empty_after_cleaning_is_left_out_with_a_warning(tmp_path):
    ref = write(tmp_path / "ref.json", json.dumps(
        [{"publication_id": 1, "data_set_id": 5, "mention_list": ["ßü", "PSID"]}]))
    sub = write(tmp_path / "sub.json", json.dumps([{"publication_id": 1, "mention": "PSID"}]))
    r = get("rcc-mentions").score(ref, sub)
    assert _counts(r) == (1, 0, 0) and r.counts["gold_mentions_empty_after_cleaning"] == 1
    assert any("1 gold mentions have no letter or digit" in w for w in r.warnings)
    u = get("rcc-mentions").score(ref, sub, cleaning="unicode")
    assert _counts(u) == (1, 0, 1) and not u.warnings


def test_result_names_the_rule_and_kaggle_is_the_default(tmp_path):
    ref = write(tmp_path / "ref.json", json.dumps(
        [{"publication_id": 1, "data_set_id": 5, "mention_list": ["PSID"]}]))
    sub = write(tmp_path / "sub.json", json.dumps([{"publication_id": 1, "mention": "psid"}]))
    r = get("rcc-mentions").score(ref, sub)
    assert r.conventions["cleaning"] == "kaggle"
    assert "clean_text" in r.conventions["cleaning_rule"]
    u = get("rcc-mentions").score(ref, sub, cleaning="unicode")
    assert u.conventions["cleaning"] == "unicode" and "NFKC" in u.conventions["cleaning_rule"]
    assert u.scorer_version.startswith("rcc-mentions/2 ")


def test_unknown_cleaning_is_invalid_input(tmp_path, cli):
    ref = write(tmp_path / "ref.json", json.dumps(
        [{"publication_id": 1, "data_set_id": 5, "mention_list": ["PSID"]}]))
    sub = write(tmp_path / "sub.json", json.dumps([{"publication_id": 1, "mention": "psid"}]))
    with pytest.raises(InvalidInput) as e:
        get("rcc-mentions").score(ref, sub, cleaning="ascii")
    assert "cleaning: unknown cleaning 'ascii'" in str(e.value.problems[0])
    code, out, err = cli("score", "rcc-mentions", "-r", ref, "-s", sub, "--cleaning", "ascii")
    assert code == 2 and "unknown cleaning 'ascii'" in err
    code, out, err = cli("score", "rcc-mentions", "-r", ref, "-s", sub, "--cleaning", "unicode",
                         "--format", "json")
    assert code == 0 and json.loads(out)["conventions"]["cleaning"] == "unicode"
