"""What is mailed, to whom, through Django's mail framework (settings.EMAIL_BACKEND).

Essential mail (password reset, decisions on one's registration or team) always
goes out; everything else (run scored/failed, results released, deadline
reminders, announcements) is skipped for people who opted out on their profile
page. People without an e-mail address get nothing. Messages never carry
scores: they link to the pages that show what the reader may see.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction

from shareval.platform.notifications.models import MailPreference, Sent

log = logging.getLogger("shareval.mail")


def link(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path


def opted_out(user) -> bool:
    return MailPreference.objects.filter(user=user, opt_out=True).exists()


def _once(key: str) -> bool:
    """True the first time ``key`` is claimed (a unique row), False ever after."""
    try:
        with transaction.atomic():
            Sent.objects.create(key=key[:200])
        return True
    except IntegrityError:
        return False


def send(users, subject: str, body: str, *, essential: bool = False,
         once: str | None = None) -> int:
    """Mail each user (deduplicated) who has an address and, for non-essential mail,
    has not opted out; with ``once``, each user gets it at most once ever."""
    n, seen = 0, set()
    for u in users:
        if u is None or u.pk in seen or not u.email:
            continue
        seen.add(u.pk)
        if not essential and opted_out(u):
            continue
        if once and not _once(f"{once}:{u.pk}"):
            continue
        footer = "" if essential else (
            f"\n\n--\nYou get this because you take part in a competition on this server. "
            f"Stop such mail on your profile page: {link('/accounts/profile/')}")
        try:
            send_mail(f"[shareval] {subject}", body + footer, settings.DEFAULT_FROM_EMAIL,
                      [u.email])
            n += 1
        except OSError:             # an unreachable SMTP server must not break the action
            log.exception("mail to %s failed: %s", u.email, subject)
    return n


def registration_decided(reg) -> int:
    comp = reg.competition
    ok = reg.status == reg.APPROVED
    body = (f"The organizers of {comp.title} {'approved' if ok else 'did not approve'} your "
            f"registration.\n\n" + (f"Form or join a team: {link(f'/c/{comp.slug}/team/')}"
                                    if ok else ""))
    return send([reg.user], f"{comp.title}: registration {'approved' if ok else 'declined'}",
                body, essential=True)


def registration_requested(reg) -> int:
    comp = reg.competition
    return send(comp.organizers.all(), f"{comp.title}: {reg.user.username} asks to take part",
                f"{reg.user.username} registered for {comp.title} and waits for your "
                f"decision: {link(f'/c/{comp.slug}/organize/access/')}", essential=True)


def team_reviewed(team) -> int:
    comp = team.competition
    ok = team.status == team.APPROVED
    members = [m.user for m in team.memberships.select_related("user")
               if m.status == m.APPROVED]
    return send(members, f"{comp.title}: team {team.name} {'approved' if ok else 'not approved'}",
                f"The organizers of {comp.title} {'approved' if ok else 'did not approve'} "
                f"team {team.name}." + (f"\n\nSubmit: {link(f'/c/{comp.slug}/submit/')}"
                                        if ok else ""), essential=True)


def invitation(inv, token: str) -> int:
    """The sign-up link to an invited address (no account needed yet)."""
    comp = inv.competition
    url = link(f"/c/{comp.slug}/join/{token}/")
    try:
        return send_mail(
            f"[shareval] You are invited to {comp.title}",
            f"The organizers of {comp.title} invite you to take part.\n\n"
            f"Sign up (or log in) and register with this link; it works once, until "
            f"{inv.expires:%Y-%m-%d %H:%M} UTC:\n{url}\n\nIf you did not expect this mail, "
            f"ignore it.", settings.DEFAULT_FROM_EMAIL, [inv.value])
    except OSError:
        log.exception("invitation mail to %s failed", inv.value)
        return 0


def lead_proposed(team) -> int:
    """Under team approval a lead change waits for the organizers."""
    comp = team.competition
    return send(comp.organizers.all(),
                f"{comp.title}: team {team.name} asks to change its lead",
                f"{team.lead.username} hands the lead of {team.name} to "
                f"{team.proposed_lead.username}; approve or refuse: "
                f"{link(f'/c/{comp.slug}/organize/#teams')}", essential=True)


def lead_changed(team, refused: bool = False) -> int:
    """The team's members learn who leads it (or that the change was refused)."""
    comp = team.competition
    members = [m.user for m in team.memberships.select_related("user")
               if m.status == m.APPROVED]
    what = (f"The organizers did not approve the change of lead; {team.lead.username} "
            f"still leads {team.name}." if refused else
            f"{team.lead.username} now leads {team.name}.")
    return send(members, f"{comp.title}: lead of team {team.name}",
                f"{what}\n\n{link(f'/c/{comp.slug}/team/')}", essential=True)


def run_finished(sub, event_pk: int) -> int:
    """"Your run was scored" / "... failed" to the team's approved members."""
    if sub.team.is_baseline:
        return 0
    comp = sub.dataset.phase.competition
    verb = "was scored" if sub.state == "scored" else "could not be scored"
    members = [m.user for m in sub.team.memberships.select_related("user")
               if m.status == m.APPROVED]
    return send(members, f"{comp.title}: your run {sub.original_name} {verb}",
                f"Your run {sub.original_name} on {sub.dataset.phase.title} / "
                f"{sub.dataset.title or sub.dataset.slug} {verb}.\n\n"
                f"Its page (what you may see of the results): {link(f'/s/{sub.pk}/')}",
                once=f"run-event:{event_pk}")


def code_run_failed(run) -> int:
    """A code submission's run ended without an output to score (test or final
    stage): the same news as a run that could not be scored. A final run that
    succeeds is mailed when its output run is scored or fails (:func:`run_finished`)."""
    cs = run.code_submission
    if cs.team.is_baseline:
        return 0
    comp = cs.dataset.phase.competition
    members = [m.user for m in cs.team.memberships.select_related("user")
               if m.status == m.APPROVED]
    stage = "test run" if run.stage == "test" else "final run"
    return send(members, f"{comp.title}: your code {cs.original_name} could not be scored",
                f"The {stage} of your code submission {cs.original_name} on "
                f"{cs.dataset.phase.title} / {cs.dataset.title or cs.dataset.slug} failed, so "
                f"it could not be scored.\n\nIts page (what you may see of the run): "
                f"{link(f'/code/{cs.pk}/')}", once=f"code-run:{run.pk}")


def results_released(phase, level: str) -> int:
    comp = phase.competition
    what = {"top": "top-level scores", "detailed": "detailed results"}.get(level)
    if what is None:
        return 0
    return send(comp.participants(), f"{comp.title}: {phase.title} {what} released",
                f"The organizers of {comp.title} released the {what} of {phase.title}.\n\n"
                f"{link(f'/c/{comp.slug}/')}", once=f"release:{phase.pk}:{level}")


def announcement(ann) -> int:
    comp = ann.competition
    return send(comp.participants(), f"{comp.title}: {ann.title}",
                f"{ann.body}\n\n({ann.published:%Y-%m-%d %H:%M} UTC, "
                f"{link(f'/c/{comp.slug}/')})", once=f"announcement:{ann.pk}")
