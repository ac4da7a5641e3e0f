"""A phase's run groups (read by ``loader.read_bundle``, saved by ``load_bundle``)::

    groups:                           # optional; a dataset is in at most one group
      - slug: lang-1a
        title: Language 1A
        datasets: [e2e-1a-eval, clir-1a-eval]
        quotas: [{limit: 5, window: phase}]       # counted over all the group's datasets
        primary: {required: true, from: [e2e-1a-eval]}

One primary run per team in a group (flagging one demotes the team's primary in
the group's other datasets); only runs of ``from`` (default: every dataset of the
group) may be primary; ``required``: the deadline check names the teams with runs
in the group but no primary. Reloading a bundle updates its groups in place.
"""
from __future__ import annotations

from shareval.platform.bundles import dataset_section
from shareval.platform.competitions.models import Quota, RunGroup

LINE = "__line__"
KEYS = {"slug", "title", "datasets", "quotas", "primary"}
PRIMARY_KEYS = {"required", "from"}


def _slugs(r, node, key: str, where: str, known: list[str], allowed_words: str) -> list[str]:
    items = node.get(key)
    if items is None:
        return []
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        r.err(node, f"{where}.{key}", "a list of dataset slugs")
        return []
    for x in items:
        if x not in known:
            r.err(node, f"{where}.{key}", f"{x!r} is not {allowed_words} "
                                          f"({', '.join(known) or 'none'})")
    return [x for x in items if x in known]


def read_groups(r, ph: dict, w: str, dataset_slugs: list[str]) -> list[dict]:
    """The phase's ``groups:`` checked: known dataset slugs, each dataset in at most one
    group, ``from`` among the group's datasets, quotas as a dataset's, no unknown keys."""
    node = ph.get("groups")
    if node is None:
        return []
    if not isinstance(node, list):
        r.err(ph, f"{w}.groups", "a list of groups ({slug, title, datasets, quotas, primary})")
        return []
    out, owner, slugs = [], {}, set()
    for i, g in enumerate(node):
        gw = f"{w}.groups[{i}]"
        if not isinstance(g, dict):
            r.err(ph, gw, "expected a mapping {slug, title, datasets, quotas, primary}")
            continue
        for k in sorted(set(g) - KEYS - {LINE}, key=str):
            r.err(g, f"{gw}.{k}", f"unknown key; a group takes {', '.join(sorted(KEYS))}")
        slug = r.slug(g, gw)
        if slug in slugs:
            r.err(g, f"{gw}.slug", f"two groups of this phase are called {slug!r}")
        slugs.add(slug)
        members = _slugs(r, g, "datasets", gw, dataset_slugs, "a dataset of this phase")
        if not g.get("datasets"):
            r.err(g, f"{gw}.datasets", "required: the slugs of the group's datasets")
        for d in members:
            if d in owner:
                r.err(g, f"{gw}.datasets", f"{d} is already in group {owner[d]!r}: a dataset "
                                           f"is in at most one group")
            owner.setdefault(d, slug)
        primary = g.get("primary") or {}
        required, frm = False, []
        if not isinstance(primary, dict):
            r.err(g, f"{gw}.primary", "a mapping {required: true|false, from: [dataset, ...]}")
        else:
            for k in sorted(set(primary) - PRIMARY_KEYS - {LINE}, key=str):
                r.err(primary, f"{gw}.primary.{k}", "unknown key; primary takes required "
                                                    "and from")
            required = primary.get("required", False)
            if not isinstance(required, bool):
                r.err(primary, f"{gw}.primary.required", "true or false")
                required = False
            frm = _slugs(r, primary, "from", f"{gw}.primary", members,
                         "one of the group's datasets")
        out.append({"slug": slug, "title": str(g.get("title") or slug or ""),
                    "datasets": members, "from": frm, "required": required,
                    "quotas": dataset_section.read_quotas(r, g, gw)})
    return out


def save_groups(phase, groups: list[dict], datasets: dict) -> None:
    """Create or update the phase's groups (``datasets``: slug -> Dataset of the phase);
    groups no longer in the bundle go, with their quotas."""
    keep = []
    for g in groups:
        group, _ = RunGroup.objects.update_or_create(
            phase=phase, slug=g["slug"],
            defaults={"title": g["title"], "primary_required": g["required"]})
        group.datasets.set([datasets[s] for s in g["datasets"]])
        group.primary_from.set([datasets[s] for s in g["from"]])
        group.quotas.all().delete()
        for q in g["quotas"]:
            Quota.objects.create(group=group, **q)
        keep.append(group.pk)
    RunGroup.objects.filter(phase=phase).exclude(pk__in=keep).delete()
