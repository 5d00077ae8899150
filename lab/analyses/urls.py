"""URL routes of the analyses app."""

from __future__ import annotations

from django.urls import path

from lab.analyses import exports, parse_api, views, workbench_api

urlpatterns = [
    path("", views.home, name="home"),
    path("new/paste/", views.submit_paste, name="submit-paste"),
    path("new/upload/", views.submit_upload, name="submit-upload"),
    path("new/upload/pick/", views.submit_upload_pick, name="submit-upload-pick"),
    path("new/hub/", views.submit_hub, name="submit-hub"),
    path("t/<str:sha256>/", views.template_detail, name="template-detail"),
    path("t/<str:sha256>/analyze/", views.analyze_again, name="template-analyze"),
    path("t/<str:sha256>/edit/", views.edit_template, name="template-edit"),
    path("compare/", views.compare_view, name="compare"),
    path("a/<int:pk>/", views.analysis_detail, name="analysis-detail"),
    path("a/<int:pk>/parser/", views.parser_panel, name="analysis-parser"),
    path("a/<int:pk>/render/", views.render_playground, name="analysis-render"),
    path("api/analyses/<int:pk>/", views.api_analysis, name="api-analysis"),
    path(
        "api/analyses/<int:pk>/result.json", views.api_analysis_result, name="api-analysis-result"
    ),
    path("api/templates/<str:sha256>/", views.api_template, name="api-template"),
    path("api/analyses/<int:pk>/parse", parse_api.parse_output, name="api-analysis-parse"),
    path("api/analyses/<int:pk>/serve", workbench_api.serve, name="api-analysis-serve"),
    path("api/templates/<str:sha256>/render", workbench_api.render_template,
         name="api-template-render"),
    path("api/compare/<str:sha_a>/<str:sha_b>/", workbench_api.compare, name="api-compare"),
    path("a/<int:pk>/grammar.gbnf", exports.grammar_file, name="analysis-grammar-file"),
    path("a/<int:pk>/parser.txt", exports.parser_file, name="analysis-parser-file"),
    path("a/<int:pk>/analysis.json", exports.analysis_file, name="analysis-json-file"),
    path("a/<int:pk>/verify.json", exports.verify_file, name="analysis-verify-file"),
]
