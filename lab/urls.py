"""Root URL configuration."""

from __future__ import annotations

from django.urls import include, path

urlpatterns = [
    path("", include("lab.analyses.urls")),
    path("corpus/", include("lab.corpus.urls")),
]
