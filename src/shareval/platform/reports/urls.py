"""Routes under /c/<competition>/report/ (included by platform/urls.py)."""
from django.urls import path

from shareval.platform.reports import views

urlpatterns = [
    path("", views.home, name="report-home"),
    path("<str:key>/", views.page, name="report"),
    path("<str:key>/<path:path>", views.file, name="report-file"),
]
