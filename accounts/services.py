from django.conf import settings
from django.db import transaction
from rest_framework.authtoken.models import Token

from accounts.middleware import SESSION_KEY
from accounts.models import Profile


def user_set_language(*, request, language: str) -> None:
    """Remember the UI language for this user (every browser) and this session."""
    if language not in dict(settings.LANGUAGES):
        raise ValueError(f"Unknown language {language!r}.")
    Profile.objects.update_or_create(user=request.user, defaults={"language": language})
    request.session[SESSION_KEY] = language


def user_restore_language(*, request) -> None:
    """At sign-in, bring the user's saved language into the session."""
    language = Profile.objects.filter(user=request.user).values_list("language", flat=True).first()
    if language:
        request.session[SESSION_KEY] = language


def user_token_regenerate(*, user) -> Token:
    """Issue a fresh API token, revoking the previous one."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)
