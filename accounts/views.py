from pathlib import Path

from axes.helpers import get_cool_off
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm
from django.http import FileResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from rest_framework.authtoken.models import Token

from accounts.services import user_restore_language, user_set_language, user_token_regenerate


class SignInView(auth_views.LoginView):
    template_name = "accounts/login.html"
    redirect_authenticated_user = True

    def form_valid(self, form):
        response = super().form_valid(form)
        user_restore_language(request=self.request)
        return response


def sign_in_username(request, credentials=None) -> str:
    """The username django-axes counts failures under (AXES_USERNAME_CALLABLE).

    The sign-in forms pass any length to authenticate() (they only set the input's maxlength),
    and axes would store it whole: on PostgreSQL a 10,000-character username was a 500. Cut to
    the longest username there can be; nothing longer names an account anyway.
    """
    username = (credentials or {}).get("username") or request.POST.get("username") or ""
    return str(username).replace("\x00", "")[:150]


def sign_in_locked_out(request, original_response=None, credentials=None):
    """django-axes answers with this once a username+address pair has failed too often
    (AXES_LOCKOUT_CALLABLE): the sign-in page again, saying why and for how long, as a 429."""
    cool_off = get_cool_off(request)
    if cool_off:
        minutes = max(1, round(cool_off.total_seconds() / 60))
        message = ngettext(
            "Too many failed sign-ins for this account from your address. "
            "Try again in %(minutes)d minute.",
            "Too many failed sign-ins for this account from your address. "
            "Try again in %(minutes)d minutes.",
            minutes,
        ) % {"minutes": minutes}
    else:  # LOGIN_COOLOFF_MINUTES=0: locked until an administrator resets it
        message = _(
            "Too many failed sign-ins for this account from your address. "
            "Ask an administrator to unlock it."
        )
    context = {
        "form": AuthenticationForm(
            request, initial={"username": sign_in_username(request, credentials)}
        ),
        "locked_out": message,
        "next": request.POST.get("next") or request.GET.get("next", ""),
    }
    return render(request, "accounts/login.html", context, status=429)


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


KB_SCRIPT = Path(__file__).resolve().parent.parent / "kbcli" / "kb.py"


@require_GET
@login_not_required
def kb_script(request):
    """The `kb` command, one file, for nodes that can reach this server but not a package
    index: `curl -fsSL <server>/kb.py -o ~/bin/kb`. It holds no secret."""
    response = FileResponse(KB_SCRIPT.open("rb"), content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = 'inline; filename="kb.py"'
    return response
