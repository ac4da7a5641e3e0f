"""Routes under /c/<competition>/annotation/ (included by platform/urls.py)."""
from django.urls import path

from shareval.platform.annotation import capture, views

urlpatterns = [
    path("", views.home, name="annotation-home"),
    path("<int:study>/", views.overview, name="annotation-study"),
    path("<int:study>/work/", views.work, name="annotation-work"),
    path("<int:study>/capture/<int:pub>/", capture.capture, name="annotation-capture"),
    path("<int:study>/related/<int:pub>/", views.related, name="annotation-related"),
    path("<int:study>/review/<int:pub>/", views.review, name="annotation-review"),
    path("<int:study>/rank/<int:pub>/", views.rank, name="annotation-rank"),
    path("<int:study>/final/", views.final, name="annotation-final"),
    path("<int:study>/results/", views.results_page, name="annotation-results"),
    path("<int:study>/audit.csv", views.audit, name="annotation-audit"),
]
