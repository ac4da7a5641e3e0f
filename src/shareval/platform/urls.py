"""Every route of the server. tests/platform/test_security.py enumerates this list."""
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from .accounts import api as accounts_api, views as accounts_views
from .competitions import api as comp_api, records_views, views as comp_views, views_access
from .judging import views as judging_views
from .submissions import api as sub_api, run_views, views as sub_views

admin.site.site_header = "shareval administration (organizers only)"

urlpatterns = [
    path("", comp_views.home, name="home"),
    path("accounts/register/", accounts_views.register, name="register"),
    path("accounts/login/", auth_views.LoginView.as_view(template_name="shareval/login.html"),
         name="login"),
    path("accounts/logout/", accounts_views.logout_page, name="logout"),
    path("accounts/tokens/", accounts_views.tokens, name="tokens"),
    path("accounts/tokens/<int:pk>/revoke/", accounts_views.revoke_token, name="revoke-token"),
    # access24: profile (mail opt-out) and password reset by e-mail
    path("accounts/profile/", accounts_views.profile, name="profile"),
    path("accounts/password-reset/", auth_views.PasswordResetView.as_view(
        template_name="shareval/password_reset.html",
        email_template_name="shareval/password_reset_email.txt",
        subject_template_name="shareval/password_reset_subject.txt"), name="password_reset"),
    path("accounts/password-reset/sent/", auth_views.PasswordResetDoneView.as_view(
        template_name="shareval/password_reset_done.html"), name="password_reset_done"),
    path("accounts/reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(
        template_name="shareval/password_reset_confirm.html"), name="password_reset_confirm"),
    path("accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(
        template_name="shareval/password_reset_complete.html"),
        name="password_reset_complete"),
    path("organize/new/", comp_views.new_competition, name="new-competition"),
    path("c/<slug:c>/", comp_views.competition, name="competition"),
    path("c/<slug:c>/team/", comp_views.team, name="team"),
    path("c/<slug:c>/submit/", sub_views.submit, name="submit"),
    path("c/<slug:c>/submissions/", sub_views.my_submissions, name="my-submissions"),
    path("c/<slug:c>/leaderboard/<slug:p>/<slug:d>/", comp_views.leaderboard, name="leaderboard"),
    path("c/<slug:c>/files/<slug:p>/<slug:d>/<str:name>", comp_views.public_file,
         name="public-file"),
    # access24: registration, pages, data; the organizers' access dashboard
    path("c/<slug:c>/register/", views_access.register, name="register-competition"),
    path("c/<slug:c>/pages/<slug:page>/", views_access.page, name="page"),
    path("c/<slug:c>/data/", views_access.data, name="data"),
    path("c/<slug:c>/data/<str:name>", views_access.data_file, name="data-file"),
    path("c/<slug:c>/organize/access/", views_access.organize_access, name="organize-access"),
    path("c/<slug:c>/organize/registrations/<int:reg>/", views_access.decide_registration,
         name="decide-registration"),
    path("c/<slug:c>/organize/invite/", views_access.invite, name="invite"),
    path("c/<slug:c>/organize/announce/", views_access.announce, name="announce"),
    path("c/<slug:c>/organize/phase-teams/<slug:p>/", views_access.phase_teams,
         name="phase-teams"),
    path("c/<slug:c>/organize/downloads.csv", views_access.downloads_csv, name="downloads-csv"),
    path("c/<slug:c>/organize/", comp_views.organize, name="organize"),
    path("c/<slug:c>/organize/release/<slug:p>/", comp_views.release, name="release"),
    path("c/<slug:c>/organize/teams/<int:team>/", comp_views.review_team, name="review-team"),
    path("c/<slug:c>/organize/rescore/<slug:t>/", comp_views.rescore, name="rescore"),
    path("c/<slug:c>/organize/results.csv", comp_views.export_csv, name="export-csv"),
    # runs24: records (fact-sheet tables, bulk downloads, the competition archive)
    path("c/<slug:c>/organize/runs.<str:fmt>", records_views.factsheet_table,
         name="factsheet-table"),
    path("c/<slug:c>/organize/submissions.zip", records_views.bulk_download,
         name="bulk-download"),
    path("c/<slug:c>/organize/export.tgz", records_views.export_archive,
         name="export-competition"),
    path("judging/", judging_views.my_campaigns, name="my-campaigns"),
    path("judging/<int:j>/", judging_views.judge, name="judge"),
    path("c/<slug:c>/organize/campaigns/", judging_views.campaigns, name="campaigns"),
    path("c/<slug:c>/organize/campaigns/<int:j>/", judging_views.manage, name="campaign"),
    path("c/<slug:c>/organize/campaigns/<int:j>/adjudicate/", judging_views.adjudicate,
         name="adjudicate"),
    path("c/<slug:c>/organize/campaigns/<int:j>/adjudicate/<int:item>/",
         judging_views.adjudicate_item, name="adjudicate-item"),
    path("c/<slug:c>/organize/campaigns/<int:j>/<str:kind>", judging_views.export,
         name="campaign-export"),
    path("c/<slug:c>/annotation/", include("shareval.platform.annotation.urls")),
    path("s/<uuid:s>/", sub_views.submission, name="submission"),
    path("s/<uuid:s>/plot/<str:name>", sub_views.plot, name="submission-plot"),
    path("s/<uuid:s>/<str:action>/", sub_views.submission_action, name="submission-action"),
    path("s/<uuid:s>/run/<str:action>/", run_views.run_action, name="run-action"),
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
    path("api/submissions/<uuid:s>/run/<str:action>/", run_views.RunAction.as_view(),
         name="api-run-action"),
    path("api/tokens/", accounts_api.TokenList.as_view(), name="api-tokens"),
    path("api/tokens/<int:pk>/", accounts_api.TokenDetail.as_view(), name="api-token"),
    path("admin/", admin.site.urls),
]
