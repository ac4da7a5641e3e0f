"""RCC phase-2 studies in a competition archive (format 2): the study with its
members, the sampled publications, their references, codings and rankings, and
the decisions trail. A publication's stored whole text travels as its "text"
(absent when there is none); the offsets of references selected in it are
checked against it on import.

Decisions are append-only (``models.Decision``): they are loaded by
:meth:`AppendOnly.restore`, one bulk insert in the trail's order with the
trail's times, never by changing rows. Codings (and the decisions that record
them) name references by primary key; the keys are mapped to the new rows.
"""
from __future__ import annotations

from shareval.platform.competitions.archive_io import dump, load, user_name

from shareval.platform.annotation.models import (
    Coding, Decision, FullText, Member, Publication, Ranking, Reference, Study
)


def export_studies(comp) -> list[dict]:
    out = []
    for st in (Study.objects.filter(dataset__phase__competition=comp)
               .select_related("dataset__phase", "designer").order_by("pk")):
        pubs = []
        texts = dict(FullText.objects.filter(publication__study=st)
                     .values_list("publication_id", "text"))
        for p in st.publications.order_by("pk"):
            pubs.append({
                "key": p.pk, **dump(p), **({"text": texts[p.pk]} if p.pk in texts else {}),
                "references": [{"key": r.pk, **dump(r), "created_by": user_name(r.created_by)}
                               for r in p.references.select_related("created_by")
                               .order_by("pk")],
                "codings": [{**dump(c), "coder": user_name(c.coder)}
                            for c in p.codings.select_related("coder").order_by("created", "pk")],
                "rankings": [{**dump(r), "judge": user_name(r.judge)}
                             for r in p.rankings.select_related("judge").order_by("pk")]})
        out.append({**dump(st), "phase": st.dataset.phase.slug, "dataset": st.dataset.slug,
                    "designer": user_name(st.designer),
                    "members": [{**dump(m), "user": user_name(m.user)}
                                for m in st.members.select_related("user").order_by("pk")],
                    "publications": pubs,
                    "decisions": [{**dump(d), "actor": user_name(d.actor),
                                   "publication": d.publication_id, "reference": d.reference_id}
                                  for d in st.decisions.select_related("actor")
                                  .order_by("created", "pk")]})
    return out


def _remap(related, refs: dict):
    """{team: {reference key: [output id]}} with the keys of the new references."""
    if not isinstance(related, dict):
        return related
    out = {}
    for team, per in related.items():
        if not isinstance(per, dict):
            return related          # not a coding: left as it is
        out[team] = {str(refs.get(str(k), k)): v for k, v in per.items()}
    return out


CODING_ACTIONS = ("code", "revise coding")


def _check_offsets(vals: dict, text: str, where: str) -> None:
    """A selected reference must lie inside its publication's text (else the
    passage pages would mark the wrong words): refused, naming the place."""
    b, e = vals.get("begin"), vals.get("end")
    if b is None and e is None:
        return
    if b is None or e is None or not 0 <= b < e <= len(text):
        raise ValueError(f"{where}.begin/end: {b}-{e} does not lie inside the publication's "
                         f"text ({len(text)} characters)")


def import_studies(studies: list[dict], users, datasets: dict) -> None:
    """``datasets``: (phase slug, dataset slug) -> Dataset of the new competition."""
    for s in studies:
        st = Study.objects.create(dataset=datasets[(s["phase"], s["dataset"])],
                                  designer=users(s["designer"]), **load(Study, s))
        Member.objects.bulk_create([Member(study=st, user=users(m["user"]), **load(Member, m))
                                    for m in s["members"]])
        pubs, refs = {}, {}
        for p in s["publications"]:
            pub = Publication.objects.create(study=st, **load(Publication, p))
            pubs[p["key"]] = pub
            text = p.get("text") or ""
            if not isinstance(text, str):
                raise ValueError(f"studies[{s['slug']}].publications[{p['key']}].text: "
                                 f"not a string")
            if text:
                FullText.objects.create(publication=pub, text=text)
            for r in p["references"]:
                vals = load(Reference, r)
                _check_offsets(vals, text, f"studies[{s['slug']}].publications[{p['key']}]"
                                           f".references[{r['key']}]")
                ref = Reference.objects.create(publication=pub, created_by=users(r["created_by"]),
                                               **vals)
                refs[str(r["key"])] = ref.pk
        for p in s["publications"]:
            pub = pubs[p["key"]]
            Coding.objects.bulk_create([
                Coding(publication=pub, coder=users(c["coder"]),
                       **{**load(Coding, c), "related": _remap(c["related"], refs)})
                for c in p["codings"]])
            Ranking.objects.bulk_create([Ranking(publication=pub, judge=users(r["judge"]),
                                                 **load(Ranking, r)) for r in p["rankings"]])
        rows = []
        for d in s["decisions"]:
            vals = load(Decision, d)
            if d["action"] in CODING_ACTIONS:
                vals["before"] = _remap(vals.get("before"), refs)
                vals["after"] = _remap(vals.get("after"), refs)
            ref = refs.get(str(d["reference"])) if d.get("reference") is not None else None
            rows.append(Decision(study=st, actor=users(d["actor"]),
                                 publication=pubs.get(d["publication"]),
                                 reference_id=ref, **vals))
        Decision.objects.restore(rows)
