from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework.authtoken.models import Token

from accounts.services import user_restore_language, user_set_language, user_token_regenerate


class SignInView(auth_views.LoginView):
    template_name = "accounts/login.html"
    redirect_authenticated_user = True

    def form_valid(self, form):
        response = super().form_valid(form)
        user_restore_language(request=self.request)
        return response


@require_POST
def language_set(request):
    language = request.POST.get("language", "")
    try:
        user_set_language(request=request, language=language)
    except ValueError:
        return HttpResponseBadRequest(_("Unknown language."))
    next_url = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(next_url, allowed_hosts={request.get_host()}):
        next_url = "/"
    return redirect(next_url)


@require_http_methods(["GET", "POST"])
def account(request):
    """The signed-in user's page: role, language and the API token for `kb` and scripts."""
    if request.method == "POST":
        token = user_token_regenerate(user=request.user)
        messages.success(request, _("A new API token was issued; the old one no longer works."))
    else:
        token = Token.objects.filter(user=request.user).first()
    return render(request, "accounts/account.html", {"token": token})
