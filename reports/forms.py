"""Inputs of the report pages and API: the matrix filters and a lead's review."""

from __future__ import annotations

import re

from django import forms
from django.utils.translation import gettext_lazy as _

from reports.selectors import MATRIX_PER_STAGE, MATRIX_WEEKS, MatrixParams

WINDOW_CHOICES = [
    (4, _("4 weeks")),
    (8, _("8 weeks")),
    (12, _("12 weeks")),
    (26, _("26 weeks")),
    (52, _("52 weeks")),
]
MAX_REPORTERS = 20
MAX_TAG_CHARS = 40
MAX_REPORTER_CHARS = 600
MAX_PER_STAGE = 50


class MatrixFilterForm(forms.Form):
    weeks = forms.TypedChoiceField(
        label=_("Window"), choices=WINDOW_CHOICES, coerce=int, required=False
    )
    tag = forms.CharField(label=_("Tag"), max_length=MAX_TAG_CHARS, required=False)
    reporter = forms.CharField(
        label=_("Team or reporter"),
        max_length=MAX_REPORTER_CHARS,
        required=False,
        help_text=_("A username, or several separated by commas for a team."),
    )
    per_stage = forms.IntegerField(
        label=_("Incidents per stage"), min_value=1, max_value=MAX_PER_STAGE, required=False
    )

    def __init__(self, data=None, *args, **kwargs):
        # Bound with the defaults filled in, so that the page shows the window it computed.
        if data is not None:
            data = data.copy()
            data.setdefault("weeks", str(MATRIX_WEEKS))
            data.setdefault("per_stage", str(MATRIX_PER_STAGE))
        super().__init__(data, *args, **kwargs)

    def clean_reporter(self) -> tuple[str, ...]:
        names = tuple(
            dict.fromkeys(
                name for name in re.split(r"[,\s]+", self.cleaned_data["reporter"]) if name
            )
        )
        if len(names) > MAX_REPORTERS:
            raise forms.ValidationError(
                _("At most %(n)s reporters at once.") % {"n": MAX_REPORTERS}
            )
        return names

    def params(self) -> MatrixParams:
        """The filters as matrix parameters; call after is_valid()."""
        data = self.cleaned_data
        return MatrixParams(
            weeks=data.get("weeks") or MATRIX_WEEKS,
            tag=(data.get("tag") or "").strip().lower(),
            reporters=data.get("reporter") or (),
            per_stage=data.get("per_stage") or MATRIX_PER_STAGE,
        )


class ReviewForm(forms.Form):
    notes = forms.CharField(
        label=_("Review notes"),
        max_length=4000,
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("What you decided this week: owners, checks to add, incidents to file."),
    )
