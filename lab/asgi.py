"""ASGI entry point: HTTP through Django (static files included), websockets through Channels."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
django_http = get_asgi_application()  # set up Django before importing consumers

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from lab.analyses.routing import websocket_urlpatterns  # noqa: E402
from lab.corpus.routing import websocket_urlpatterns as corpus_websockets  # noqa: E402

application = ProtocolTypeRouter(
    {
        # Serving /static/ from the app keeps `bin/lab` and the compose file free of a web server.
        "http": ASGIStaticFilesHandler(django_http),
        "websocket": AllowedHostsOriginValidator(
            URLRouter(websocket_urlpatterns + corpus_websockets)
        ),
    }
)
