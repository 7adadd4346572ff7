"""Django's CommonMiddleware, except that a write under /api/ to a path without its trailing
slash is redirected with 308, which keeps the method and the body.

Django answers it with 301 (or, with DEBUG, an HTML 500): clients follow a 301 with a GET, so
`POST /api/v1/incidents` came back 200 with the list of incidents and filed nothing.
"""

from __future__ import annotations

from django.http import HttpResponsePermanentRedirect
from django.middleware.common import CommonMiddleware
from django.utils.http import escape_leading_slashes

from config.limits import API_PREFIX

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _api_write(request) -> bool:
    return request.path.startswith(API_PREFIX) and request.method not in SAFE_METHODS


class SlashMiddleware(CommonMiddleware):
    def get_full_path_with_slash(self, request):
        if _api_write(request):
            return escape_leading_slashes(request.get_full_path(force_append_slash=True))
        return super().get_full_path_with_slash(request)

    def process_request(self, request):
        return self._keep_the_method(request, super().process_request(request))

    def process_response(self, request, response):
        return self._keep_the_method(request, super().process_response(request, response))

    @staticmethod
    def _keep_the_method(request, response):
        if isinstance(response, HttpResponsePermanentRedirect) and _api_write(request):
            response.status_code = 308
        return response
