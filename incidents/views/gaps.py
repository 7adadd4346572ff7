from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from incidents import selectors
from incidents.models import KnowledgeGap


@require_GET
def gap_list(request):
    return render(request, "incidents/gap_list.html", selectors.gap_list())


@require_GET
def gap_draft(request, pk):
    """One click from an unexplained tail to a pre-filled incident form."""
    gap = get_object_or_404(KnowledgeGap, pk=pk)
    query = urlencode(
        {
            "title": selectors.gap_title(gap),
            "symptom": gap.example_line[:4000],
            "stage": gap.stage,
            "gap": gap.pk,
        }
    )
    return redirect(reverse("incidents:incident-create") + "?" + query)
