"""Routes under /c/<competition>/workbench/ (included by platform/urls.py)."""
from django.urls import path

from shareval.platform.workbench import views, views_unit

urlpatterns = [
    path("", views.home, name="workbench-home"),
    path("<slug:p>/", views.project, name="workbench-project"),
    path("<slug:p>/u/<int:unit>/", views_unit.page, name="workbench-unit"),
    path("<slug:p>/u/<int:unit>/state", views_unit.state, name="workbench-state"),
    path("<slug:p>/u/<int:unit>/ops", views_unit.ops, name="workbench-ops"),
    path("<slug:p>/entries", views_unit.entries, name="workbench-entries"),
    path("<slug:p>/curate/<int:unit>/", views_unit.curate, name="workbench-curate"),
    path("<slug:p>/codebook/", views.codebook, name="workbench-codebook"),
    path("<slug:p>/export/<slug:fmt>/", views.export, name="workbench-export"),
    path("<slug:p>/trail.csv", views.trail, name="workbench-trail"),
]
