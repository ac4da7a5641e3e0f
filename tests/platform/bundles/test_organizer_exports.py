"""The organizers' exports are for scripts too: an API token opens them as it opens
the REST API (they sent scripts to the log-in page), a wrong token gets one line,
and a token of someone who is not an organizer gets what that person gets."""
from __future__ import annotations

import pytest

from shareval.platform.accounts.models import ApiToken
from shareval.platform.submissions import queue

EXPORTS = ["/c/tiny/organize/results.csv", "/c/tiny/organize/downloads.csv",
           "/c/tiny/organize/runs.csv", "/c/tiny/organize/runs.tex",
           "/c/tiny/organize/submissions.zip", "/c/tiny/organize/export.tgz"]


@pytest.fixture
def scored(world):
    queue.drain()
    return world


@pytest.mark.parametrize("url", EXPORTS)
def test_an_organizers_token_downloads_each_export(scored, client, url):
    _, key = ApiToken.issue(scored["org"], "script")
    r = client.get(url, HTTP_AUTHORIZATION=f"Token {key}")
    assert r.status_code == 200, (url, r.status_code)
    assert "attachment" in r["Content-Disposition"]


def test_the_results_csv_by_token_is_the_one_the_browser_gets(scored, client):
    _, key = ApiToken.issue(scored["org"], "script")
    by_token = client.get(EXPORTS[0], HTTP_AUTHORIZATION=f"Token {key}").content
    client.force_login(scored["org"])
    assert client.get(EXPORTS[0]).content == by_token and b"Baseline" in by_token


def test_wrong_and_other_peoples_tokens(scored, client):
    r = client.get(EXPORTS[0], HTTP_AUTHORIZATION="Token nope")
    assert r.status_code == 401 and r.content == b"invalid or revoked token\n"
    _, key = ApiToken.issue(scored["users"]["alice"], "hers")
    assert client.get(EXPORTS[0], HTTP_AUTHORIZATION=f"Token {key}").status_code == 404
    assert client.get(EXPORTS[0]).status_code == 302          # no token: the log-in page


def test_judging_and_study_exports_take_tokens_too(scored, client):
    from shareval.platform.judging.models import Campaign
    camp = Campaign.objects.create(dataset=scored["ds"]["dev"], slug="c", title="C",
                                   design=Campaign.CHAIN, config={"chains": {"default": [
                                       {"id": "ok", "text": "ok?"}]}})
    _, key = ApiToken.issue(scored["org"], "script")
    r = client.get(f"/c/tiny/organize/campaigns/{camp.pk}/judgments.csv",
                   HTTP_AUTHORIZATION=f"Token {key}")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
