"""What `train-system --split` trains on, and that bench/quality.py never scores a
detection model on documents it was trained on."""
import importlib.util
from pathlib import Path

import pytest

from shareval.systems import svident, training

_SPEC = importlib.util.spec_from_file_location(
    "quality", Path(__file__).parents[2] / "bench" / "quality.py")
quality = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(quality)

HEADER = "sentence\tis_variable\tvariable\tresearch_data\tdoc_id\tuuid\tlang\n"
POSITIVE = ["Respondents were asked how satisfied they are with the government.",
            "The survey asked about household income and the number of children.",
            "Wie zufrieden sind Sie mit der Bundesregierung?",
            "Gefragt wurde nach dem Einkommen des Haushalts."]
NEGATIVE = ["We thank the reviewers for their comments.",
            "The remainder of the paper is organised as follows.",
            "Wir danken den Gutachtern für ihre Hinweise.",
            "Der Beitrag gliedert sich wie folgt."]


def _train_tsv(path: Path) -> Path:
    """Four documents per language, so that the split holds one of each out (the fourth
    in id order)."""
    lines, n = [HEADER], 0
    for lang, offset in (("en", 0), ("de", 2)):
        for doc in range(1, 5):
            for k in range(2):
                for label, pool in ((1, POSITIVE), (0, NEGATIVE)):
                    n += 1
                    variable = "ZA1_Var1\tZA1" if label else "\t"
                    lines.append(f"{pool[offset + k]} ({lang}{doc})\t{label}\t{variable}\t"
                                 f"{lang}{doc}\tu{n}\t{lang}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_the_split_decides_which_documents_train_the_detector(tmp_path):
    tsv = _train_tsv(tmp_path / "train.tsv")
    quiet = dict(log=lambda *a: None)
    part = training.train_svident_detection(tsv, tmp_path / "part.npz", split="train", **quiet)
    assert part["held_out_documents"] == ["de4", "en4"]
    assert (part["split"], part["documents"], part["sentences"]) == ("train", 6, 24)
    whole = training.train_svident_detection(tsv, tmp_path / "all.npz", split="all", **quiet)
    assert (whole["split"], whole["documents"], whole["sentences"]) == ("all", 8, 32)
    assert whole["held_out_documents"] == []
    # the neighbour term keeps the training sentences it was given
    assert len(svident.DetectionModel.load(tmp_path / "all.npz").labels) == 32
    assert len(svident.DetectionModel.load(tmp_path / "part.npz").labels) == 24
    with pytest.raises(ValueError, match="split must be one of train, all"):
        training.train_svident_detection(tsv, tmp_path / "x.npz", split="held-out", **quiet)
    with pytest.raises(ValueError, match="split must be one of train, all"):
        training.train_rcc(tmp_path, tmp_path / "x.json", split="everything", **quiet)


def test_the_shipped_detector_is_trained_on_every_document():
    meta = svident.detection_model().meta
    assert training.SHIPPED_SPLIT == {"rcc": "train", "svident": "all"}
    assert (meta["split"], meta["documents"], meta["held_out_documents"]) == ("all", 30, [])


def test_quality_scores_the_training_part_never_a_model_that_saw_the_held_out(tmp_path):
    data = tmp_path / "data"
    (data / "sv-ident" / "train").mkdir(parents=True)
    tsv = _train_tsv(data / "sv-ident" / "train" / "train.tsv")
    quiet = dict(log=lambda *a: None)
    training.train_svident_detection(tsv, tmp_path / "all.npz", split="all", **quiet)
    with pytest.raises(ValueError, match=r"trained on 2 of the held-out documents \(de4, en4\)"):
        quality.svident_detection_quality(data, tmp_path / "all.npz", tmp_path)
    # without a model, the row trains the recipe on the training part itself
    (row,) = quality.svident_detection_quality(data, None, tmp_path)
    assert row[1] == "2 held-out documents, 8 sentences (trained on 6 documents)"
    assert 0.0 <= row[3] <= 1.0


def test_train_system_svident_takes_the_split(tmp_path, cli):
    data = tmp_path / "data"
    (data / "sv-ident" / "train").mkdir(parents=True)
    _train_tsv(data / "sv-ident" / "train" / "train.tsv")
    for split, documents in (("train", 6), ("all", 8), (None, 8)):     # default: as shipped
        out = tmp_path / f"{split}" / "detection.npz"
        out.parent.mkdir()
        code, _, err = cli("train-system", "svident", "--data", data, "--out", out,
                           *(["--split", split] if split else []))
        assert code == 0, err
        meta = svident.DetectionModel.load(out).meta
        assert (meta["split"], meta["documents"]) == (split or "all", documents)
        assert (out.parent / "svident_dense.npz").exists()
    code, _, err = cli("train-system", "material", "--split", "all", "--input", tmp_path,
                       "--pack", tmp_path)
    assert code == 2 and "train-system material has no --split" in err


def test_run_and_serve_svident_read_a_trained_model(tmp_path, cli):
    import json
    tsv = _train_tsv(tmp_path / "train.tsv")
    model = tmp_path / "part.npz"
    training.train_svident_detection(tsv, model, split="train", log=lambda *a: None)
    sentences = tmp_path / "sentences.tsv"
    sentences.write_text("uuid\tsentence\n" + "".join(
        f"s{i}\t{text}\n" for i, text in enumerate(POSITIVE + NEGATIVE)), encoding="utf-8")
    code, out, err = cli("run", "svident", sentences, tmp_path / "out", "-q", "--model", model)
    assert code == 0, err
    assert json.loads(out)["detection_model"] == str(model)
    mine = svident.detect(POSITIVE + NEGATIVE, model=svident.DetectionModel.load(model))
    shipped = svident.detect(POSITIVE + NEGATIVE)
    assert [s for _, s in mine] != [s for _, s in shipped]     # the file is what is used
    written = json.loads((tmp_path / "out" / "detection.json").read_text())
    assert written == {f"s{i}": p for i, (p, _) in enumerate(mine)}
    code, out, err = cli("run", "svident", sentences, tmp_path / "o2", "-q")
    assert code == 0 and json.loads(out)["detection_model"] == "shipped"
    # a file that is not a model, and a missing one, are named; nothing is written
    for bad, message in ((sentences, "not a detection model written by `shareval train-system "
                                     "svident`"), (tmp_path / "none.npz", "no such file")):
        code, _, err = cli("run", "svident", sentences, tmp_path / "o3", "-q", "--model", bad)
        assert code == 2 and f"{bad}: --model: {message}" in err
    assert not (tmp_path / "o3").exists()
    from shareval.systems.run_svident import svident_service
    routes = svident_service({"model": str(model)})
    handler = routes["/detect"][0]
    answer = handler({"sentences": POSITIVE + NEGATIVE})
    assert [p["score"] for p in answer["predictions"]] == [s for _, s in mine]
