"""Requests the server will not read: too large, or malformed. Both answered in words.

Django caps a form body at DATA_UPLOAD_MAX_MEMORY_SIZE, but neither uploaded files nor DRF's
JSON parser are held to it (a JSON body is read whole into memory), so the cap is applied here,
to the declared Content-Length, before anything reads the body. An upload (multipart) may be
larger, up to ANALYSIS_MAX_UPLOAD_BYTES: Django streams it to a temporary file and the
analysis reads only its tail.
"""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

API_PREFIX = "/api/"


def _error(request, status: int, code: str, message: str):
    if request.path.startswith(API_PREFIX):
        body = {"error": {"status": status, "code": code, "message": message, "fields": {}}}
        return JsonResponse(body, status=status)
    # A request refused before authentication (a forged Host header) has no user to show.
    page_request = request if hasattr(request, "user") else None
    context = {"status": status, "message": message}
    return render(page_request, "error.html", context, status=status)


class RequestSizeLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if request.META.get("CONTENT_TYPE", "").startswith("multipart/form-data"):
            # A log file may be large: it goes to a temporary file, and only its tail is read.
            limit = settings.ANALYSIS_MAX_UPLOAD_BYTES
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = 0
        if limit is not None and size > limit:
            message = _(
                "The request is %(size)s bytes; the limit is %(limit)s bytes. "
                "Paste or upload the last lines of the log only."
            ) % {"size": f"{size:,}", "limit": f"{limit:,}"}
            return _error(request, 413, "too_large", message)
        return self.get_response(request)


def bad_request(request, exception):
    """handler400: malformed form data, too many fields, a forged Host header."""
    return _error(
        request,
        400,
        "bad_request",
        _("The request could not be read (malformed or oversized form data)."),
    )


def server_error(request):
    """handler500: under /api/ the API's error body (JSON, as every other answer there), a
    page of the site elsewhere. The error itself is logged by Django."""
    return _error(
        request,
        500,
        "server_error",
        _("Something went wrong on our side; the error was logged. Try again in a moment."),
    )


def forbidden(request, exception):
    """handler403: the reason the refusing code gave (each is written for the user and
    translated), on a page of the site or in the API's error body."""
    reason = str(exception) if exception and str(exception) else ""
    return _error(request, 403, "forbidden", reason or _("Your role may not do this."))


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: a form sent without its token, with an old one, or from another site."""
    return _error(
        request,
        403,
        "csrf_failed",
        _("The form had expired or came from another site. Reload the page and send it again."),
    )


def not_found(request, exception):
    """handler404: in the API's error body under /api/, a page of the site elsewhere."""
    return _error(request, 404, "not_found", _("There is nothing at this address."))
