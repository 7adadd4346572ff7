from django.utils import translation

SESSION_KEY = "language"


class UserLanguageMiddleware:
    """Speak the language a signed-in user chose, on whatever browser they use today.

    The choice lives on the user's profile; it is copied into the session at sign-in
    (accounts.views.SignInView) so that no request pays a query for it.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        language = request.session.get(SESSION_KEY)
        if language and request.user.is_authenticated:
            translation.activate(language)
            request.LANGUAGE_CODE = language
        return self.get_response(request)
