"""One error body for every API failure:
{"error": {"status": 400, "code": "invalid", "message": "…", "fields": {"stage": ["…"]}}}."""

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.utils.translation import gettext as _
from rest_framework import exceptions
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        detail = (
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )
        exc = exceptions.ValidationError(detail)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    codes = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
    fields = {}
    if isinstance(response.data, dict) and "detail" not in response.data:
        fields = response.data
        message = _("Some fields are not valid.") if fields else _("Invalid input.")
        code = "invalid"
    elif isinstance(response.data, list):
        message, code = " ".join(str(item) for item in response.data), "invalid"
    else:
        message = str(response.data.get("detail", ""))
        code = codes if isinstance(codes, str) else "error"
    response.data = {
        "error": {
            "status": response.status_code,
            "code": code,
            "message": message,
            "fields": fields,
        }
    }
    return response


ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "status": {"type": "integer"},
                "code": {"type": "string"},
                "message": {"type": "string"},
                "fields": {
                    "type": "object",
                    "additionalProperties": {"$ref": "#/components/schemas/FieldErrors"},
                },
            },
            "required": ["status", "code", "message", "fields"],
        }
    },
    "required": ["error"],
}
# A field's messages, or (for a list or a nested object) its items' messages by position or name.
FIELD_ERRORS_SCHEMA = {
    "anyOf": [
        {"type": "array", "items": {"type": "string"}},
        {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/FieldErrors"}},
    ]
}
ERRORS = {
    "400": "Invalid input: `fields` says what is wrong with each field.",
    "401": "Not signed in: send `Authorization: Token <key>` (or a session cookie).",
    "403": "Not allowed (e.g. only leads manage signatures).",
    "404": "No such object.",
    "429": "Too many requests: wait for the number of seconds in Retry-After.",
}
BODY_ERRORS = {
    "413": "The body is larger than the server accepts.",
    "415": "The body is not JSON, form data or multipart.",
}


# Django refuses a null character in any form value (a 400 that says so); the schema says it.
NO_NULL_CHARACTER = r"^[^\u0000]*$"


def document_errors(result, generator, request, public):
    """drf-spectacular postprocessing hook: every operation may answer with the error body,
    and no text of a query may hold a null character."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR_SCHEMA
    schemas["FieldErrors"] = FIELD_ERRORS_SCHEMA
    body = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result["paths"].values():
        for method, operation in operations.items():
            errors = {**ERRORS, **(BODY_ERRORS if method in ("post", "put", "patch") else {})}
            for status, description in errors.items():
                operation["responses"].setdefault(
                    status, {"description": description, "content": body}
                )
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                free_text = not {"enum", "pattern", "format"} & schema.keys()
                if parameter["in"] == "query" and schema.get("type") == "string" and free_text:
                    schema["pattern"] = NO_NULL_CHARACTER
    return result
