"""Django settings for Template Lab; everything deployment-specific comes from the environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
FRONTEND_DIR = BASE_DIR / "frontend"
VAR_DIR = Path(os.environ.get("LAB_VAR_DIR", BASE_DIR / "var"))


def _env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "template-lab-development-key-not-for-production")
DEBUG = _env_flag("DJANGO_DEBUG")
ALLOWED_HOSTS = _env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = _env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "daphne",  # first, so `runserver` serves ASGI (websockets included)
    "django.contrib.contenttypes",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "template_partials",
    "lab.analyses",
    "lab.corpus",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "lab.middleware.ContentSecurityPolicyMiddleware",
    "lab.middleware.JsonErrorsMiddleware",
]

ROOT_URLCONF = "lab.urls"
ASGI_APPLICATION = "lab.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [FRONTEND_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
            ],
        },
    },
]


def _database_from_env() -> dict[str, Any]:
    url = os.environ.get("DATABASE_URL", "")
    if url:
        database: dict[str, Any] = dict(dj_database_url.parse(url))
    else:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        database = {"ENGINE": "django.db.backends.sqlite3", "NAME": VAR_DIR / "lab.sqlite3"}
    if database["ENGINE"].endswith("sqlite3"):
        # WAL lets the web process read while a worker writes; IMMEDIATE avoids upgrade deadlocks.
        database["OPTIONS"] = {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
        # A file (not :memory:) so worker and server processes started by tests share it;
        # the pid keeps concurrent test runs in one checkout apart.
        database["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}
    else:
        database["TEST"] = {"NAME": f"test_{database['NAME']}_{os.getpid()}"}
    return database


DATABASES = {"default": _database_from_env()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")

# channels-redis waits for a message with a blocking read of up to 5 s (BZPOPMIN, its
# `brpop_timeout`); redis-py (>= 6) gives every socket read a 5 s `socket_timeout` by default,
# so an idle read timed out and closed every live socket (1011) about every 5.5 s. The socket
# timeout must exceed the blocking read; tests/lab/test_channel_layer.py checks both.
CHANNEL_LAYER_SOCKET_TIMEOUT = 30.0

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": CHANNEL_LAYER_SOCKET_TIMEOUT}]
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

CELERY_BROKER_URL = REDIS_URL or "redis://127.0.0.1:6379/0"
CELERY_TASK_IGNORE_RESULT = True  # results live in the database, not in Celery's backend
# A corpus run's chord counts its finished tasks in a result backend (tasks opt in).
CELERY_RESULT_BACKEND = CELERY_BROKER_URL
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_TIMEOUT = 5
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 3, "interval_start": 0, "interval_step": 0.5}

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [
    FRONTEND_DIR / "static",
    ("vendor/htmx", FRONTEND_DIR / "node_modules" / "htmx.org" / "dist"),
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# Template Lab's own settings.
LAB_MAX_TEMPLATE_BYTES = int(os.environ.get("LAB_MAX_TEMPLATE_BYTES", 1_000_000))
LAB_HUB_TIMEOUT = float(os.environ.get("LAB_HUB_TIMEOUT", 15))
LAB_HUB_CACHE_DIR = os.environ.get("LAB_HUB_CACHE_DIR") or None  # None: huggingface_hub's own
LAB_ANALYSIS_TIME_LIMIT = int(os.environ.get("LAB_ANALYSIS_TIME_LIMIT", 120))
# Address-space cap of each worker process, in MiB (0: none); see lab.limits.
LAB_WORKER_MEMORY_MB = int(os.environ.get("LAB_WORKER_MEMORY_MB", 4096))
# Delivery guarantees (lab.analyses.claims, lab.analyses.reconcile, lab.corpus.recovery).
# A running row is leased; its task renews the lease every LAB_HEARTBEAT_SECONDS while it runs
# (lab.analyses.heartbeat), so an expired lease means its worker died: the reconciler re-sends
# it within LAB_LEASE_SECONDS + LAB_RECONCILE_SECONDS of the death (was ~160 s + 30 s).
LAB_LEASE_SECONDS = float(os.environ.get("LAB_LEASE_SECONDS", 15))
LAB_HEARTBEAT_SECONDS = float(os.environ.get("LAB_HEARTBEAT_SECONDS", LAB_LEASE_SECONDS / 5))
LAB_MAX_ATTEMPTS = int(os.environ.get("LAB_MAX_ATTEMPTS", 3))  # claims before a row is failed
LAB_RECONCILE_SECONDS = float(os.environ.get("LAB_RECONCILE_SECONDS", 10))  # Celery beat period
# A queued row handed to the broker this long ago without a worker taking it is sent again.
LAB_QUEUED_STALE_SECONDS = float(os.environ.get("LAB_QUEUED_STALE_SECONDS", 120))
# A corpus run with no new result for this long has lost its tasks or its chord: it is closed.
LAB_RUN_STALE_SECONDS = float(os.environ.get("LAB_RUN_STALE_SECONDS", 900))

CELERY_TASK_REJECT_ON_WORKER_LOST = True  # a killed pool child's task goes back to the queue
CELERY_BEAT_SCHEDULE = {
    "reconcile-analyses": {
        "task": "lab.analyses.tasks.reconcile_analyses_task",
        "schedule": LAB_RECONCILE_SECONDS,
    },
    "reconcile-corpus-runs": {
        "task": "lab.corpus.tasks.reconcile_runs_task",
        "schedule": LAB_RECONCILE_SECONDS,
    },
}

# Each analysis runs in a child process killed past this wall clock (s) or extra memory (MiB).
LAB_ANALYSIS_WALL_SECONDS = float(os.environ.get("LAB_ANALYSIS_WALL_SECONDS", 8))
LAB_ANALYSIS_MEMORY_MB = int(os.environ.get("LAB_ANALYSIS_MEMORY_MB", 1024))
# A submission waits up to this long (s) for its analysis to end before showing the pending
# page (lab.analyses.brief_wait): a quick analysis lands straight on its result. 0: never.
LAB_SUBMIT_WAIT_SECONDS = float(os.environ.get("LAB_SUBMIT_WAIT_SECONDS", 0.6))
# A stored result larger than this fails instead (the newline bomb once stored 60 MB).
LAB_MAX_RESULT_BYTES = int(os.environ.get("LAB_MAX_RESULT_BYTES", 5_000_000))
# Characters the live textbox parses per connection (a full state reply stays far below the
# 1 MiB websocket frame limit).
LAB_LIVE_MAX_CHARS = int(os.environ.get("LAB_LIVE_MAX_CHARS", 100_000))

# "pages": finished analysis pages, rendered once per web process (lab.analyses.page_cache).
# Jinja's compiled code of each template, shared by the lab's processes ("" keeps none).
LAB_CODE_CACHE_DIR = os.environ.get("LAB_CODE_CACHE_DIR", str(VAR_DIR / "jinja-code"))
# A cached analysis page checks its row (done? newest origin?) at most this often per process.
LAB_PAGE_RECHECK_SECONDS = float(os.environ.get("LAB_PAGE_RECHECK_SECONDS", 2))
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "pages": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "analysis-pages",
        "OPTIONS": {"MAX_ENTRIES": 200},
    },
}

FILE_UPLOAD_MAX_MEMORY_SIZE = LAB_MAX_TEMPLATE_BYTES + 1
DATA_UPLOAD_MAX_MEMORY_SIZE = 4 * LAB_MAX_TEMPLATE_BYTES

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LAB_LOG_LEVEL", "WARNING")},
}
