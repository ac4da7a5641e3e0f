"""Spec 002's question chains for relation mentions, worded from the relation
inventory and the entity types of the reference.

Per relation: is the subject of the right type, is the object, does the text
say the relation holds ("Does the text say that “Anna Berg” was born in
“Oslo”?"). Question ids are ``subject``, ``object``, ``relation``
(assessment.estimate.ENTITY_QUESTIONS); default skip rules (no: incorrect).

A side's types are those of at least ``SHARE`` of the relation's labels in the
reference (always the commonest): the commonest alone would ask "is Harvard
University a place?" of the 29% of Re-DocRED's "located in the administrative
territorial entity" labels whose subject is an organization, and a true fact
would be judged wrong. A relation without labels asks only the relation
question; so does a side whose types have no words (untyped mentions).
"""
from __future__ import annotations

from collections import Counter

from shareval.formats.kbp import KbpReference

SHARE = 0.10
TYPE_ORDER = ("PER", "LOC", "ORG", "TIME", "NUM", "MISC")
TYPE_WORDS = {"PER": "a person", "LOC": "a place", "ORG": "an organization",
              "TIME": "a date or time", "NUM": "a number",
              "MISC": "a named thing such as a work, an event or a nationality"}
MISC_IN_LIST = "another named thing (such as a work, an event or a nationality)"

# "{s}" is the subject, "{o}" the object; keyed by label (any inventory using
# Wikidata's labels reads naturally). Other labels: see relation_phrase.
PHRASES = {
    "head of government": "{o} is or was the head of government of {s}",
    "country": "{s} is in or belongs to the country {o}",
    "place of birth": "{s} was born in {o}",
    "place of death": "{s} died in {o}",
    "father": "{o} is the father of {s}",
    "mother": "{o} is the mother of {s}",
    "spouse": "{o} is or was the spouse of {s}",
    "country of citizenship": "{s} is or was a citizen of {o}",
    "continent": "{s} is on the continent {o}",
    "instance of": "{s} is an instance of {o} (a thing of that kind)",
    "head of state": "{o} is or was the head of state of {s}",
    "capital": "{o} is or was the capital of {s}",
    "official language": "{o} is an official language of {s}",
    "position held": "{s} held the position {o}",
    "child": "{o} is a child of {s}",
    "author": "{o} is an author of {s}",
    "member of sports team": "{s} plays or played for the sports team {o}",
    "director": "{o} directed {s}",
    "screenwriter": "{o} wrote the screenplay of {s}",
    "educated at": "{s} was educated at {o}",
    "composer": "{o} composed {s}",
    "member of political party": "{s} is or was a member of the political party {o}",
    "employer": "{s} works or worked for {o}",
    "founded by": "{s} was founded by {o}",
    "league": "{s} plays or played in the league {o}",
    "publisher": "{o} published {s}",
    "owned by": "{s} is or was owned by {o}",
    "located in the administrative territorial entity":
        "{s} is located in {o} (a country, region, city or other administrative area)",
    "genre": "{o} is a genre of {s}",
    "operator": "{o} operates or operated {s}",
    "religion": "{o} is the religion of {s}",
    "contains administrative territorial entity":
        "{s} contains {o} (a region, district, city or other administrative area)",
    "follows": "{s} comes right after {o} in a series or sequence",
    "followed by": "{s} comes right before {o} in a series or sequence",
    "headquarters location": "{s} has its headquarters in {o}",
    "cast member": "{o} acted or appeared in {s}",
    "producer": "{o} is a producer of {s}",
    "award received": "{s} received the award {o}",
    "creator": "{o} created {s}",
    "parent taxon": "{o} is the parent taxon of {s}",
    "ethnic group": "{o} is an ethnic group of {s}",
    "performer": "{o} performed {s}",
    "manufacturer": "{o} manufactures or manufactured {s}",
    "developer": "{o} developed {s}",
    "series": "{s} is part of the series {o}",
    "sister city": "{s} and {o} are sister cities",
    "legislative body": "{o} is the legislative body of {s}",
    "basin country": "the basin of {s} lies at least partly in the country {o}",
    "located in or next to body of water": "{s} is located in or next to the body of water {o}",
    "military branch": "{s} serves or served in, or is part of, the military branch {o}",
    "record label": "{o} is a record label of {s}",
    "production company": "{o} is a production company of {s}",
    "location": "{s} is located in or took place in {o}",
    "subclass of": "{s} is a subclass (a kind) of {o}",
    "subsidiary": "{o} is a subsidiary of {s}",
    "part of": "{s} is part of {o}",
    "original language of work": "{s} was originally written or made in the language {o}",
    "platform": "{s} runs on or is available on the platform {o}",
    "mouth of the watercourse": "{s} flows into {o}",
    "original network": "{s} was first broadcast on {o}",
    "member of": "{s} is or was a member of {o}",
    "chairperson": "{o} is or was the chairperson of {s}",
    "country of origin": "{s} comes from the country {o}",
    "has part": "{o} is part of {s}",
    "residence": "{s} lives or lived in {o}",
    "date of birth": "{s} was born on or in {o}",
    "date of death": "{s} died on or in {o}",
    "inception": "{s} was founded, created or began on or in {o}",
    "dissolved, abolished or demolished": "{s} was dissolved, abolished or demolished on or in {o}",
    "publication date": "{s} was published or released on or in {o}",
    "start time": "{s} started on or in {o}",
    "end time": "{s} ended on or in {o}",
    "point in time": "{s} happened on or in {o}",
    "conflict": "{s} took part in the conflict {o}",
    "characters": "{o} is a character in {s}",
    "lyrics by": "{o} wrote the lyrics of {s}",
    "located on terrain feature":
        "{s} is located on {o} (a landform such as an island, a mountain or a peninsula)",
    "participant": "{o} took part in {s}",
    "influenced by": "{s} was influenced by {o}",
    "location of formation": "{s} was formed in {o}",
    "parent organization": "{o} is the parent organization of {s}",
    "notable work": "{o} is a notable work of {s}",
    "separated from": "{s} separated from {o}",
    "narrative location": "{s} is set in {o}",
    "work location": "{s} works or worked in {o}",
    "applies to jurisdiction": "{s} applies to (has authority over) {o}",
    "product or material produced": "{s} produces or produced {o}",
    "unemployment rate": "the unemployment rate of {s} is {o}",
    "territory claimed by": "{s} is a territory claimed by {o}",
    "participant of": "{s} took part in {o}",
    "replaces": "{s} replaced {o}",
    "replaced by": "{s} was replaced by {o}",
    "capital of": "{s} is or was the capital of {o}",
    "languages spoken, written or signed": "{s} speaks, writes or signs the language {o}",
    "present in work": "{s} appears in the work {o}",
    "sibling": "{s} and {o} are siblings",
}
PREPOSITIONS = ("by", "of", "in", "at", "on", "from", "to", "with", "for", "as")


def relation_phrase(label: str) -> str:
    """The relation as a clause with ``{s}`` and ``{o}``: from PHRASES, else
    "{s} is <label> {o}" for a label ending in a preposition ("founded by"),
    else "the <label> of {s} is {o}" (a noun: "place of birth")."""
    known = PHRASES.get(" ".join(label.lower().split()))
    if known:
        return known
    words = " ".join(label.split()) or "related to"
    if words.rsplit(" ", 1)[-1].lower() in PREPOSITIONS:
        return "{s} is " + words + " {o}"
    return "the " + words + " of {s} is {o}"


def relation_question(label: str) -> str:
    """The chain's relation question, with ``{subject}`` and ``{object}`` for designs.fill."""
    clause = relation_phrase(label).replace("{", "{{").replace("}", "}}")
    clause = clause.replace("{{s}}", "“{subject}”").replace("{{o}}", "“{object}”")
    return f"Does the text say that {clause}?"


def type_words(types: list[str]) -> str:
    """'a person', 'a place or an organization', ... ('' when none has words)."""
    known = [t for t in TYPE_ORDER if t in types]
    if not known:
        return ""
    if len(known) == 1:
        return TYPE_WORDS[known[0]]
    words = [MISC_IN_LIST if t == "MISC" else TYPE_WORDS[t] for t in known]
    return ", ".join(words[:-1]) + " or " + words[-1]


def type_profile(ref: KbpReference) -> dict[str, tuple[list[str], list[str]]]:
    """relation id -> (subject types, object types) of its labels in the reference:
    each type of at least SHARE of the labels (the commonest always), commonest first."""
    sides: dict[str, tuple[Counter, Counter]] = {}
    for doc in ref.documents.values():
        for h, t, rid in doc.labels:
            subj, obj = sides.setdefault(rid, (Counter(), Counter()))
            subj[doc.types[h] if h < len(doc.types) else ""] += 1
            obj[doc.types[t] if t < len(doc.types) else ""] += 1

    def kept(c: Counter) -> list[str]:
        ranked = sorted(c, key=lambda k: (-c[k], k))
        total = sum(c.values())
        return [k for i, k in enumerate(ranked) if i == 0 or c[k] >= SHARE * total]
    return {rid: (kept(s), kept(o)) for rid, (s, o) in sides.items()}


def kbp_chains(reference: KbpReference, guidance: dict | None = None) -> dict[str, list[dict]]:
    """relation id -> its question chain, for every relation of the inventory.
    ``guidance`` (relation id or label -> text) rides on the relation question."""
    profile = type_profile(reference)
    by_id = {}
    for key, text in (guidance or {}).items():
        rid = reference.relation_id(str(key))
        if rid is not None:
            by_id[rid] = str(text)
    chains = {}
    for rid, label in reference.relations.items():
        chain = []
        subj, obj = profile.get(rid, ([], []))
        if type_words(subj):
            chain.append({"id": "subject", "text": f"Is “{{subject}}” {type_words(subj)}?"})
        if type_words(obj):
            chain.append({"id": "object", "text": f"Is “{{object}}” {type_words(obj)}?"})
        q = {"id": "relation", "text": relation_question(label)}
        if rid in by_id:
            q["guidance"] = by_id[rid]
        chains[rid] = chain + [q]
    return chains
