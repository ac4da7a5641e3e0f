"""The MATERIAL demo's synthetic evaluation period: collections, queries, references.

Per language (1A, 1B) a DevTest pack and an Eval pack of English 'translations':
news and topical text (NW, TX) and transcripts of news broadcasts and
conversations (NB, CS), written from sentence templates. A document relevant
to a query says so with the query's words or, as translations do, with
related words; speech transcripts lose words (recognition errors). Some
documents that are not relevant mention a query word in passing. So word
matching finds many relevant documents but not all, and some false alarms.
Every choice comes from one seeded generator: the same files every time.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

PERIOD = "BASE"
DATASET_NAME = {"devtest": "DEV", "eval": "EVAL1EVAL2"}   # plan 8.2.1.2
QUERYSET = "QUERY2QUERY3"
LANGUAGES = ("1A", "1B")
PACKS = ("devtest", "eval")
DOCS_PER_PACK = 300
SEED = 37

# (domain, subject words of the domain, topics: (query string, query type, words that
# express the topic in a translation: the literal words first, then related ones))
DOMAINS = {
    "Government-And-Politics": (
        "parliament minister ministry governor senate coalition opposition policy reform "
        "mayor council", [
            ('"election results"', "lexical", "election results | vote count ballots"),
            ("corruption+", "conceptual", "corruption | bribes embezzlement kickbacks"),
            ("<protest>", "lexical", "protest protesters | demonstration rally"),
            ("referendum", "lexical", "referendum | plebiscite popular vote"),
            ("taxation+", "conceptual", "taxation taxes | levy revenue duties"),
            ('"press freedom"', "lexical", "press freedom | journalists censorship")]),
    "Physical-And-Mental-Health": (
        "hospital clinic doctor nurse patients medicine treatment health ministry", [
            ("cholera", "lexical", "cholera | diarrhoea outbreak contaminated water"),
            ("vaccination+", "conceptual", "vaccination vaccine | immunization injections"),
            ('"mental health"', "lexical", "mental health | depression anxiety"),
            ("malaria", "lexical", "malaria | mosquito nets fever"),
            ("EXAMPLE_OF(disease)", "conceptual", "disease | tuberculosis measles typhoid"),
            ('"clean water"', "lexical", "clean water | wells sanitation")]),
    "Law-And-Order": (
        "police court judge prosecutor lawyer prison verdict trial officers", [
            ("smuggling", "lexical", "smuggling smugglers | contraband trafficking"),
            ('bribery+, "police officer"', "conceptual",
             "bribery police officer | payment patrol"),
            ("<arrest>", "lexical", "arrest arrested | detained custody"),
            ('"drug trafficking"', "lexical", "drug trafficking | narcotics cocaine"),
            ("fraud+", "conceptual", "fraud | forgery scam counterfeit"),
            ("kidnapping", "lexical", "kidnapping kidnapped | abduction hostage")]),
    "Lifestyle": (
        "family friends music festival food weekend village city tradition", [
            ("wedding", "lexical", "wedding | bride groom ceremony"),
            ('"football match"', "lexical", "football match | stadium goal"),
            ("cooking+", "conceptual", "cooking recipe | kitchen dish spices"),
            ("concert", "lexical", "concert | singer band stage"),
            ("<fashion>", "lexical", "fashion | clothes designer dresses"),
            ("tourism+", "conceptual", "tourism tourists | hotels visitors beach")]),
    "Business-And-Commerce": (
        "market company bank prices trade investors factory economy exports", [
            ('"interest rates"', "lexical", "interest rates | central bank loans"),
            ("harvest", "lexical", "harvest | crops farmers maize"),
            ("unemployment+", "conceptual", "unemployment jobs | layoffs workers"),
            ("<tariff>", "lexical", "tariff tariffs | import duties customs"),
            ('"oil prices"', "lexical", "oil prices | fuel petrol"),
            ("inflation", "lexical", "inflation | rising costs currency")]),
    "Military": (
        "army soldiers troops border defence commander navy forces", [
            ("ceasefire", "lexical", "ceasefire | truce peace talks"),
            ("EXAMPLE_OF(weapon)", "conceptual", "weapon weapons | rifles missiles artillery"),
            ('"military exercise"', "lexical", "military exercise | drills manoeuvres"),
            ("landmines", "lexical", "landmines | mines explosives"),
            ("refugees+", "conceptual", "refugees | displaced camps fleeing"),
            ('"peacekeeping mission"', "lexical", "peacekeeping mission | blue helmets")]),
}
LANGUAGE_DOMAINS = {
    "1A": ["Government-And-Politics", "Physical-And-Mental-Health", "Law-And-Order",
           "Lifestyle"],
    "1B": ["Government-And-Politics", "Business-And-Commerce", "Military",
           "Physical-And-Mental-Health"],
}
PLACES = {"1A": "Kamali Doruma Selvik Arawa Temisa Liroq Banjul Otavi".split(),
          "1B": "Vardan Kesh Mirova Talgir Ostrava Zemun Pelka Ruvan".split()}
WHO = ("officials", "local residents", "the spokesman", "a reporter", "the committee",
       "community leaders", "witnesses", "the minister", "teachers", "farmers")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
TEXT_FRAMES = (
    "{who} said the {a} and the {b} were discussed in {place} on {day}.",
    "According to {who}, the {a} affected many families near {place}.",
    "{who} reported new concerns about the {a} after the {b} last {day}.",
    "The {a} in {place} drew criticism from {who}.",
    "Residents of {place} asked {who} about the {a} and the {b}.",
    "{who} promised that the {a} would not delay the {b}.",
    "In {place}, the {a} remained the main topic for {who} this week.",
)
SPEECH_FRAMES = (
    "yes so {who} were saying the {a} uh in {place}",
    "you know the {a} and the {b} it is every {day} now",
    "I heard from {who} that the {a} um is getting worse",
    "no no the {b} in {place} that was before the {a}",
    "so what about the {a} did {who} say anything",
)
# (genre, mode, share of the collection, word loss of the transcript)
GENRES = (("NW", "text", 0.4, 0.0), ("TX", "text", 0.3, 0.0),
          ("NB", "speech", 0.15, 0.08), ("CS", "speech", 0.15, 0.25))


@dataclass
class Topic:
    query_id: str
    query_string: str
    domain: str
    type: str
    pack: int                  # query pack 1 (open), 2 or 3 (closed)
    literal: list[str]         # the words of the query
    related: list[str]         # words a translation may use instead

    @property
    def status(self) -> str:
        return "open" if self.pack == 1 else "closed"


@dataclass
class Document:
    doc_id: str
    genre: str
    mode: str
    text: str
    relevant: set[str] = field(default_factory=set)    # query ids


def topics(lang: str) -> list[Topic]:
    """The language's 24 queries: six per domain, query pack 1 (open) then 2 and 3."""
    out = []
    for d, domain in enumerate(LANGUAGE_DOMAINS[lang]):
        for t, (qs, kind, words) in enumerate(DOMAINS[domain][1]):
            literal, related = (part.split() for part in words.split("|"))
            n = len(out) + 1
            out.append(Topic(f"query{lang}{n:03d}", qs, domain, kind, 1 + t // 2, literal,
                             related))
    return out


def _sentence(rng: random.Random, frames, subject: list[str], place: list[str],
              a: str | None = None) -> str:
    frame = rng.choice(frames)
    return frame.format(who=rng.choice(WHO), place=rng.choice(place), day=rng.choice(DAYS),
                        a=a or rng.choice(subject), b=rng.choice(subject))


def _topic_phrase(rng: random.Random, topic: Topic) -> str:
    """How a relevant translation names the topic: the query's words (most often) or
    related ones (a conceptual query, or a translator's choice)."""
    literal_share = 0.45 if topic.type == "conceptual" else 0.7
    if rng.random() < literal_share:
        return " ".join(topic.literal)
    return " ".join(rng.sample(topic.related, k=min(len(topic.related), rng.choice((1, 2)))))


def _transcribe(rng: random.Random, text: str, loss: float) -> str:
    """A speech transcript: lower case, no punctuation, some words lost."""
    words = re.findall(r"[\w']+", text.lower())
    return " ".join(w for w in words if rng.random() >= loss)


def collection(lang: str, pack: str, queries: list[Topic]) -> list[Document]:
    """The documents of one pack, with the queries each is relevant to."""
    rng = random.Random(f"{SEED}-{lang}-{pack}")
    numbers = sorted(rng.sample(range(10_000_000, 99_999_999), DOCS_PER_PACK))
    domains = LANGUAGE_DOMAINS[lang]
    # relevant documents per query: a few, some queries none (as in real packs)
    relevant: dict[int, set[str]] = {}
    for q in queries:
        n = rng.choice((0, 2, 3, 4, 5, 6, 8, 10))
        for i in rng.sample(range(DOCS_PER_PACK), n):
            relevant.setdefault(i, set()).add(q.query_id)
    by_id = {q.query_id: q for q in queries}
    docs = []
    shares = [g[2] for g in GENRES]
    for i, number in enumerate(numbers):
        genre, mode, _, loss = rng.choices(GENRES, weights=shares)[0]
        frames = SPEECH_FRAMES if mode == "speech" else TEXT_FRAMES
        rel = relevant.get(i, set())
        domain = by_id[sorted(rel)[0]].domain if rel else rng.choice(domains)
        subject = DOMAINS[domain][0].split()
        body = [_sentence(rng, frames, subject, PLACES[lang])
                for _ in range(rng.randint(5, 10))]
        for qid in sorted(rel):                # one to three mentions of the topic
            for _ in range(rng.choice((1, 2, 2, 3))):
                body.insert(rng.randrange(len(body) + 1),
                            _sentence(rng, frames, subject, PLACES[lang],
                                      _topic_phrase(rng, by_id[qid])))
        for _ in range(rng.choice((0, 0, 1, 1, 2))):   # passing mentions of query words
            other = rng.choice(queries)
            if other.query_id not in rel:
                body.insert(rng.randrange(len(body) + 1),
                            _sentence(rng, frames, subject, PLACES[lang],
                                      rng.choice(other.literal + other.related)))
        text = " ".join(body)
        if mode == "speech":
            text = _transcribe(rng, text, loss)
        docs.append(Document(f"MATERIAL_{PERIOD}-{lang}_{number:08d}", genre, mode, text, rel))
    return docs


def write_pack(root: Path, lang: str, pack: str, queries: list[Topic],
               docs: list[Document]) -> Path:
    """A reference pack (docs/material.md) plus translations.tsv, the documents' text."""
    (root / "clir").mkdir(parents=True, exist_ok=True)
    (root / "pack.yaml").write_text(
        f"language: {lang}\neval_period: {PERIOD}\ndataset_name: {DATASET_NAME[pack]}\n"
        f"queryset: {QUERYSET}\ndocid_pattern: true\n")
    (root / "documents.tsv").write_text("doc_id\tgenre\tmode\n" + "".join(
        f"{d.doc_id}\t{d.genre}\t{d.mode}\n" for d in docs))
    (root / "translations.tsv").write_text("doc_id\ttext\n" + "".join(
        f"{d.doc_id}\t{d.text}\n" for d in docs), encoding="utf-8")
    write_queries(root / "queries.tsv", queries)
    for q in queries:
        (root / "clir" / f"{q.query_id}.tsv").write_text("".join(
            f"{d.doc_id}\t{'Y' if q.query_id in d.relevant else 'N'}\n" for d in docs))
    return root


def write_queries(path: Path, queries: list[Topic]) -> None:
    path.write_text("query_id\tquery\tstatus\tpack\ttype\n" + "".join(
        f"{q.query_id}\t{q.query_string}:{q.domain}\t{q.status}\t{q.pack}\t{q.type}\n"
        for q in queries))


def read_translations(pack: Path) -> dict[str, str]:
    lines = (pack / "translations.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return dict(line.split("\t", 1) for line in lines)
