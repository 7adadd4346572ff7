"""One settings module: defaults that run out of the box, environment variables for production.

Embedded defaults: SQLite under var/, Celery on the private Redis that bin/start runs under var/.
Production: DATABASE_URL=postgres://…, CELERY_BROKER_URL=redis://…, SECRET_KEY, ALLOWED_HOSTS.
"""

import os
import secrets
from datetime import timedelta
from pathlib import Path

import environ
from celery.schedules import crontab
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from common.choices import LANGUAGE_CHOICES

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()

VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once and kept in var/."""
    if key := env.str("SECRET_KEY", default=""):
        return key
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "django_htmx",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "csp",
    "axes",
    "common",
    "accounts",
    "incidents",
    "runbooks",
    "reports",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "config.slashes.SlashMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.UserLanguageMiddleware",
    "config.limits.RequestSizeLimitMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes requires: it turns a lockout into the sign-in page's message.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.roles",
            ],
        },
    },
]

# https://docs.djangoproject.com/en/5.2/ref/databases/#sqlite-notes
# IMMEDIATE transactions are what stop "database is locked" when web and worker write at once.
SQLITE_OPTIONS = {
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = SQLITE_OPTIONS
    # A file, not memory, so that the tests' real Celery workers share the test database;
    # one per test process, so that two test runs never share one.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# https://django-axes.readthedocs.io/en/latest/2_installation.html
# Axes first: it refuses a locked-out username+address before any password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "accounts.backends.RolesBackend",
]
# After LOGIN_FAILURE_LIMIT wrong passwords for one username from one address, that pair is
# refused for LOGIN_COOLOFF_MINUTES (a success before then resets the count).
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "accounts.views.sign_in_locked_out"
AXES_USERNAME_CALLABLE = "accounts.views.sign_in_username"
AXES_VERBOSE = False
# The address counted is the client's as TRUSTED_PROXY_COUNT reverse proxies report it
# (common/addresses.py): 0 reads REMOTE_ADDR; behind one HTTPS proxy set it to 1, or every
# sign-in shares the proxy's address and five wrong passwords lock a user out for everyone.
# https://django-axes.readthedocs.io/en/latest/4_configuration.html#configuring-reverse-proxies
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
AXES_CLIENT_IP_CALLABLE = "common.addresses.client_address"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "incidents:incident-list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = env.str("LANGUAGE_CODE", default="en")
LANGUAGES = LANGUAGE_CHOICES
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns about a missing folder
STATICFILES_DIRS = [BASE_DIR / "static"]
# Served by WhiteNoise straight from the app folders, so no collectstatic is needed to start.
WHITENOISE_USE_FINDERS = True

# Celery. https://docs.celeryq.dev/en/stable/userguide/configuration.html
# Embedded default: the private Redis that bin/start runs on a socket under var/ (the same
# transport as production, so a message survives a worker's death and a restart).
CELERY_BROKER_URL = env.str(
    "CELERY_BROKER_URL", default=f"redis+socket://{VAR_DIR / 'redis' / 'redis.sock'}"
)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Redis hands an unacknowledged task to another worker after this many seconds; a claim
    # whose worker died is taken over sooner, by the sweep (ANALYSIS_CLAIM_GRACE_SECONDS).
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=600),
    # Sending a task to a broker that is down: one quick retry, then the row waits, queued,
    # for the sweep, and the person who pasted the tail is not kept waiting.
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
# Pasted tails have a queue of their own; re-ranking after knowledge edits and the weekly
# report run on another, served by their own worker, so that they never delay an analysis.
CELERY_TASK_DEFAULT_QUEUE = "analyses"
CELERY_TASK_ROUTES = {
    "incidents.tasks.analyses_rescore": {"queue": "rescore"},
    # A slow chat server must not hold up a pasted tail.
    "incidents.tasks.webhook_send": {"queue": "rescore"},
    "reports.tasks.*": {"queue": "rescore"},
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Any tail within the cap is analysed in about a second; the limits stop what goes wrong.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=20)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=30)
# A worker's claim on a tail lasts the hard time limit plus this: past it, the worker died
# and the sweep (every 15 s) sends the tail again, so a dead worker's tail is taken over
# within about a minute.
ANALYSIS_CLAIM_GRACE_SECONDS = env.int("ANALYSIS_CLAIM_GRACE_SECONDS", default=10)
if ANALYSIS_CLAIM_GRACE_SECONDS < 0:
    # Otherwise the sweep would take analyses away from workers that are still running them.
    raise ImproperlyConfigured("ANALYSIS_CLAIM_GRACE_SECONDS cannot be negative.")
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULER = "config.beat:Scheduler"
CELERY_BEAT_SCHEDULE = {
    "analysis-sweep": {"task": "incidents.tasks.analysis_sweep", "schedule": 15.0},
}


# Weekly report (reports app): built and mailed to the leads by beat, on TIME_ZONE's clock.
# WEEKLY_REPORT_CRON is a five-field cron line: minute hour day-of-month month day-of-week.
WEEKLY_REPORT_CRON = env.str("WEEKLY_REPORT_CRON", default="0 9 * * mon")
WEEKLY_REPORT_EMAIL = env.bool("WEEKLY_REPORT_EMAIL", default=True)
WEEKLY_REPORT_EXTRA_RECIPIENTS = env.list("WEEKLY_REPORT_EXTRA_RECIPIENTS", default=[])
WEEKLY_REPORT_BASE_URL = env.str("WEEKLY_REPORT_BASE_URL", default="http://127.0.0.1:8000")
WEEKLY_REPORT_TREND_WEEKS = env.int("WEEKLY_REPORT_TREND_WEEKS", default=12)
WEEKLY_REPORT_STALE_WEEKS = env.int("WEEKLY_REPORT_STALE_WEEKS", default=8)


def _weekly_report_crontab(line: str) -> crontab:
    fields = line.split()
    if len(fields) != 5:
        raise ImproperlyConfigured(
            f"WEEKLY_REPORT_CRON needs five fields (minute hour day month weekday): {line!r}"
        )
    minute, hour, day_of_month, month_of_year, day_of_week = fields
    return crontab(
        minute=minute,
        hour=hour,
        day_of_month=day_of_month,
        month_of_year=month_of_year,
        day_of_week=day_of_week,
    )


CELERY_BEAT_SCHEDULE["weekly-report"] = {
    "task": "reports.tasks.report_week_publish",
    "schedule": _weekly_report_crontab(WEEKLY_REPORT_CRON),
}
# Pasted tails and their log paths lose secrets before anything stores them; e-mail
# addresses, private IP addresses and internal host names too, unless this is 0 (they reach
# the gaps page and the weekly e-mail, which go to the whole team).
REDACT_ADDRESSES = env.bool("REDACT_ADDRESSES", default=True)
# How often a process looks whether the knowledge changed (one primary-key read); a change
# this process made is seen at once.
KNOWLEDGE_CHECK_SECONDS = env.float("KNOWLEDGE_CHECK_SECONDS", default=1.0)
# An incident's similar incidents are ranked once for the whole site (in the cache) and
# served up to this many seconds after a change to the book; 0 ranks again after every change.
SIMILAR_LAG_SECONDS = env.float("SIMILAR_LAG_SECONDS", default=60.0)
ANALYSIS_MAX_BYTES = env.int("ANALYSIS_MAX_BYTES", default=2 * 1024 * 1024)
# A pasted tail at the cap still fits in a request, so the user gets the cap's own message.
DATA_UPLOAD_MAX_MEMORY_SIZE = ANALYSIS_MAX_BYTES + 1024 * 1024
# An uploaded log may be longer than the cap: its last ANALYSIS_MAX_BYTES are analysed.
ANALYSIS_MAX_UPLOAD_BYTES = env.int("ANALYSIS_MAX_UPLOAD_BYTES", default=256 * 1024 * 1024)
# When the broker is unreachable at submit time, the web request gives up after this long
# and leaves the row queued for the sweep.
CELERY_BROKER_CONNECTION_TIMEOUT = env.float("CELERY_BROKER_CONNECTION_TIMEOUT", default=2.0)
CELERY_TASK_PUBLISH_RETRY = False

REST_FRAMEWORK = {
    # Token first: an anonymous call is then told 401 with `WWW-Authenticate: Token` (DRF
    # answers with the first class's challenge; a session has none, which would make it 403).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["incidents.api.permissions.SignedIn"],
    "DEFAULT_PARSER_CLASSES": [
        "common.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "incidents.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "common.api_errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "common.throttles.AnonRateThrottle",
        "common.throttles.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_ANON_THROTTLE_RATE", default="30/min"),
        "user": env.str("API_THROTTLE_RATE", default="600/min"),
        "analyses": env.str("ANALYSIS_THROTTLE_RATE", default="120/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Incident KB API",
    "DESCRIPTION": "Incidents, signatures, recurrences and log analyses.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_PERMISSIONS": ["incidents.api.permissions.SignedIn"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "common.api_errors.document_errors",
    ],
}

# Per process by default; with several web processes or hosts, a shared cache (e.g.
# CACHE_URL=redis://redis:6379/1) makes the API throttles count across all of them.
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

EMAIL_CONFIG = env.email_url("EMAIL_URL", default="consolemail://")
vars().update(EMAIL_CONFIG)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="incident-kb@localhost")

# https://docs.djangoproject.com/en/5.2/howto/deployment/checklist/
# `manage.py check --deploy` is clean with the production variables of the README.
# Sessions live in the database (logging out ends them everywhere), read with one plain statement.
SESSION_ENGINE = "accounts.sessions"
SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True
# Scripts never read the CSRF cookie: pages hand htmx the token in hx-headers (base.html).
CSRF_COOKIE_HTTPONLY = True
# A refused form is answered on a page of the site, in the reader's language (config/limits.py).
CSRF_FAILURE_VIEW = "config.limits.csrf_failure"
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
# A year of HSTS is what the browsers' preload list asks for; set these to 0 when a
# subdomain of the site's domain still serves plain HTTP.
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool(
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", default=SECURE_HSTS_SECONDS >= 31536000
)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=SECURE_HSTS_SECONDS >= 31536000)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# https://django-csp.readthedocs.io/en/latest/configuration.html
# No inline script, no inline style, nothing from another site. The API docs relax the
# styles only (config/api_docs.py); the trend chart sends its own, stricter policy.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
        "base-uri": [SELF],
    }
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
