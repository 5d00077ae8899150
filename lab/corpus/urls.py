"""URL routes of the corpus app (mounted under /corpus/)."""

from __future__ import annotations

from django.urls import path

from lab.corpus import views

urlpatterns = [
    path("", views.dashboard, name="corpus-dashboard"),
    path("runs/", views.run_history, name="corpus-runs"),
    path("runs/new/", views.start_run, name="corpus-run-start"),
    path("runs/<int:pk>/", views.run_detail, name="corpus-run"),
    path("runs/<int:pk>/cancel/", views.cancel_run, name="corpus-run-cancel"),
    path("runs/<int:pk>/results.csv", views.export_csv, name="corpus-run-csv"),
    path("results/<int:pk>/", views.result_detail, name="corpus-result"),
    path("diff/", views.diff_view, name="corpus-diff"),
    path("api/runs/latest/", views.api_latest_run, name="corpus-api-latest"),
    path("api/runs/<int:pk>/", views.api_run, name="corpus-api-run"),
    path("api/diff/", views.api_diff, name="corpus-api-diff"),
]
