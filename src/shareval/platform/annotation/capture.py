"""The coder's *Capture* page. With the publication's whole text stored, a
reference is selected in it (a page at a time; static/annotation/capture.js
fills the offsets) and the server derives its name and passage; without a
stored text the coder types the name and pastes the passage, as before."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from shareval.platform.workbench.service import pages

from shareval.platform.annotation import service, spans
from shareval.platform.annotation.forms import ReferenceForm, SpanForm
from shareval.platform.annotation.models import Member, Reference
from shareval.platform.annotation.sources import DATA_WORDS
from shareval.platform.annotation.views import _need, _pub, _study, marked


def segments(text: str, begin: int, end: int, refs) -> list[tuple[str, str]]:
    """text[begin:end] cut into (piece, css classes): "dw" a data word, "ref" inside
    a recorded reference. Pieces join back to the exact slice, so the page's
    character count matches the offsets."""
    cuts = {begin, end}
    words = [(m.start() + begin, m.end() + begin) for m in DATA_WORDS.finditer(text[begin:end])]
    spans_ = [(max(b, begin), min(e, end)) for b, e in refs if b < end and e > begin]
    for b, e in words + spans_:
        cuts.update((b, e))
    points = sorted(cuts)
    out = []
    for b, e in zip(points, points[1:]):
        cls = " ".join(c for c, ranges in (("dw", words), ("ref", spans_))
                       if any(x <= b and e <= y for x, y in ranges))
        out.append((text[b:e], cls))
    return out


def _page_of(bounds, offset: int) -> int:
    return next((i for i, (b, e) in enumerate(bounds) if b <= offset < e), 0)


def _back(st, p, page: int):
    url = reverse("annotation-capture", kwargs={"c": st.competition.slug, "study": st.pk,
                                                "pub": p.pk})
    return redirect(f"{url}?page={page}" if page else url)


@login_required
def capture(request, c, study, pub):
    st = _study(c, study)
    _need(st, request.user, Member.CODER)
    p = _pub(st, pub)
    text = service.stored_text(p)
    bounds = pages(text) if text else []
    try:
        page = min(max(int(request.GET.get("page", 0)), 0), max(len(bounds) - 1, 0))
    except ValueError:
        page = 0
    form = SpanForm(text=text) if text else ReferenceForm()
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "add":
                form = SpanForm(request.POST, text=text) if text else ReferenceForm(request.POST)
                if form.is_valid():
                    d = form.cleaned_data
                    if text:
                        service.capture_span(p, request.user, d["kind"], d["begin"], d["end"])
                    else:
                        service.capture_add(p, request.user, d["kind"], d["name"], d["context"])
                    messages.success(request, "Reference recorded.")
                    return _back(st, p, page)
            elif action == "withdraw":
                ref = get_object_or_404(Reference, pk=request.POST.get("ref"), publication=p)
                service.capture_withdraw(ref, request.user)
                return _back(st, p, page)
            elif action == "finish":
                service.capture_finish(p, request.user)
                messages.success(request, f"Capture of publication {p.publication_id} finished.")
                return redirect("annotation-work", c=c, study=st.pk)
        except (service.BadInput, service.NotAllowed) as e:
            field = getattr(e, "field", None)
            form.add_error(field if field in form.fields else None, str(e))
    refs = list(p.references.all())
    ctx = {"comp": st.competition, "st": st, "p": p, "form": form, "text": bool(text),
           "refs": [{"r": r, "marked": spans.marked(text, r),
                     "page": _page_of(bounds, r.begin) if r.begin is not None else None}
                    for r in refs]}
    if text:
        b, e = bounds[page]
        live = [(r.begin, r.end) for r in refs
                if r.begin is not None and r.status != Reference.REMOVED]
        ctx.update(page=page, page_begin=b, page_end=e, pieces=segments(text, b, e, live),
                   pages=[{"n": i, "words": len(DATA_WORDS.findall(text, x, y))}
                          for i, (x, y) in enumerate(bounds)],
                   prev=page - 1 if page > 0 else None,
                   next=page + 1 if page + 1 < len(bounds) else None, length=len(text))
    else:
        ctx.update(opening=marked(p.payload.get("opening", "")),
                   passages=[marked(x) for x in p.payload.get("passages", [])])
    return render(request, "annotation/capture.html", ctx)
