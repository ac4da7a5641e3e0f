"""Every route of the server. tests/platform/test_security.py enumerates this list."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from .accounts import api as accounts_api, views as accounts_views
from .competitions import api as comp_api, views as comp_views
from .judging import views as judging_views
from .submissions import api as sub_api, views as sub_views

admin.site.site_header = "shareval administration (organizers only)"

urlpatterns = [
    path("", comp_views.home, name="home"),
    path("accounts/register/", accounts_views.register, name="register"),
    path("accounts/login/", auth_views.LoginView.as_view(template_name="shareval/login.html"),
         name="login"),
    path("accounts/logout/", accounts_views.logout_page, name="logout"),
    path("accounts/tokens/", accounts_views.tokens, name="tokens"),
    path("accounts/tokens/<int:pk>/revoke/", accounts_views.revoke_token, name="revoke-token"),
    path("organize/new/", comp_views.new_competition, name="new-competition"),
    path("c/<slug:c>/", comp_views.competition, name="competition"),
    path("c/<slug:c>/team/", comp_views.team, name="team"),
    path("c/<slug:c>/submit/", sub_views.submit, name="submit"),
    path("c/<slug:c>/submissions/", sub_views.my_submissions, name="my-submissions"),
    path("c/<slug:c>/leaderboard/<slug:p>/<slug:d>/", comp_views.leaderboard, name="leaderboard"),
    path("c/<slug:c>/files/<slug:p>/<slug:d>/<str:name>", comp_views.public_file,
         name="public-file"),
    path("c/<slug:c>/organize/", comp_views.organize, name="organize"),
    path("c/<slug:c>/organize/release/<slug:p>/", comp_views.release, name="release"),
    path("c/<slug:c>/organize/teams/<int:team>/", comp_views.review_team, name="review-team"),
    path("c/<slug:c>/organize/rescore/<slug:t>/", comp_views.rescore, name="rescore"),
    path("c/<slug:c>/organize/results.csv", comp_views.export_csv, name="export-csv"),
    path("judging/", judging_views.my_campaigns, name="my-campaigns"),
    path("judging/<int:j>/", judging_views.judge, name="judge"),
    path("judging/<int:j>/text/<int:item>/", judging_views.judge_text, name="judge-text"),
    path("c/<slug:c>/organize/campaigns/", judging_views.campaigns, name="campaigns"),
    path("c/<slug:c>/organize/campaigns/<int:j>/", judging_views.manage, name="campaign"),
    path("c/<slug:c>/organize/campaigns/<int:j>/late/", judging_views.add_late,
         name="campaign-late"),
    path("c/<slug:c>/organize/campaigns/<int:j>/crowd/", judging_views.crowd_import,
         name="campaign-crowd"),
    path("c/<slug:c>/organize/campaigns/<int:j>/adjudicate/", judging_views.adjudicate,
         name="adjudicate"),
    path("c/<slug:c>/organize/campaigns/<int:j>/adjudicate/<int:item>/",
         judging_views.adjudicate_item, name="adjudicate-item"),
    path("c/<slug:c>/organize/campaigns/<int:j>/<str:kind>", judging_views.export,
         name="campaign-export"),
    path("s/<uuid:s>/", sub_views.submission, name="submission"),
    path("s/<uuid:s>/plot/<str:name>", sub_views.plot, name="submission-plot"),
    path("s/<uuid:s>/<str:action>/", sub_views.submission_action, name="submission-action"),
    # REST API
    path("api/competitions/", comp_api.CompetitionList.as_view(), name="api-competitions"),
    path("api/competitions/<slug:c>/", comp_api.CompetitionDetail.as_view(),
         name="api-competition"),
    path("api/competitions/<slug:c>/leaderboard/<slug:p>/<slug:d>/",
         comp_api.Leaderboard.as_view(), name="api-leaderboard"),
    path("api/competitions/<slug:c>/release/<slug:p>/", comp_api.Release.as_view(),
         name="api-release"),
    path("api/competitions/<slug:c>/rescore/<slug:t>/", comp_api.Rescore.as_view(),
         name="api-rescore"),
    path("api/competitions/<slug:c>/results.csv", comp_api.ExportCsv.as_view(),
         name="api-export-csv"),
    path("api/submissions/", sub_api.SubmissionList.as_view(), name="api-submissions"),
    path("api/submissions/<uuid:s>/", sub_api.SubmissionDetail.as_view(), name="api-submission"),
    path("api/submissions/<uuid:s>/primary/",
         sub_api.SubmissionAction.as_view(action="primary"), name="api-submission-primary"),
    path("api/submissions/<uuid:s>/cancel/",
         sub_api.SubmissionAction.as_view(action="cancel"), name="api-submission-cancel"),
    path("api/tokens/", accounts_api.TokenList.as_view(), name="api-tokens"),
    path("api/tokens/<int:pk>/", accounts_api.TokenDetail.as_view(), name="api-token"),
    path("admin/", admin.site.urls),
]
