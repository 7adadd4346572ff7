from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from incidents import selectors, services
from incidents.forms import SignatureForm
from incidents.models import Incident, Signature
from incidents.permissions import can_manage_signatures


def _require_lead(user) -> None:
    if not can_manage_signatures(user):
        raise PermissionDenied(_("Only leads manage signatures."))


@require_http_methods(["GET", "POST"])
def signature_create(request, slug):
    _require_lead(request.user)
    incident = get_object_or_404(Incident, slug=slug)
    return _signature_form(request, incident, Signature(incident=incident))


@require_http_methods(["GET", "POST"])
def signature_edit(request, pk):
    _require_lead(request.user)
    signature = get_object_or_404(Signature.objects.select_related("incident"), pk=pk)
    return _signature_form(request, signature.incident, signature)


def _signature_form(request, incident, signature):
    form = SignatureForm(request.POST or None, instance=signature)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            if signature.pk:
                services.signature_update(
                    signature=Signature.objects.get(pk=signature.pk), data=data, actor=request.user
                )
            else:
                services.signature_create(incident=incident, author=request.user, **data)
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                form.add_error(field if field in form.fields else None, problems)
        else:
            messages.success(request, _("Signature saved. Stored analyses are being re-scored."))
            return redirect(incident)
    context = {"form": form, "incident": incident, "signature": signature}
    return render(
        request, "incidents/signature_form.html", context, status=400 if form.errors else 200
    )


@require_POST
def signature_try(request):
    """htmx: test an expression against its examples and a pasted sample while editing it."""
    _require_lead(request.user)
    result = selectors.signature_try(
        pattern=request.POST.get("pattern", "")[:1000],
        examples=request.POST.get("examples", "")[:8000],
        unless=request.POST.get("unless", "")[:1000],
        sample=request.POST.get("sample", "")[:200_000],
    )
    return render(request, "incidents/partials/signature_try.html", {"result": result})
