from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from common.widgets import DateInput
from incidents.models import EDITABLE_FIELDS, Feedback, Incident, Recurrence, Signature
from incidents.models.incident import tag_names_clean

# Inline help from the handbook's incident-book format: four columns, one line each.
HELP = {
    "symptom": _(
        "Quote the log line verbatim (one line is best; a few at most). "
        "It becomes a signature at once, so the next identical failure is recognised."
    ),
    "root_cause": _("One sentence that explains why it happened, not what the log said."),
    "remedy": _("Down to the command or parameter: what exactly to run or change."),
    "discipline": _(
        "Which of the four prevention disciplines would have stopped it: version lock, "
        "validate first, tiny-sample trial run, artifact reconciliation."
    ),
    "prevention": _("How the discipline applies here, so the same gap does not open again."),
    "stage": _("Where the pipeline broke: build, data, train or serve."),
    "environment": _("Hardware, driver and framework versions where it happened."),
    "tags": _("Comma-separated, e.g. nccl, ascend, 显存."),
    "slug": _("Stable identifier used in links, the API and the CLI. Leave empty to derive it."),
}


class IncidentForm(forms.ModelForm):
    tags = forms.CharField(label=_("Tags"), required=False, max_length=400, help_text=HELP["tags"])
    slug = forms.SlugField(label=_("Slug"), required=False, max_length=80, help_text=HELP["slug"])

    class Meta:
        model = Incident
        fields = list(EDITABLE_FIELDS)
        widgets = {
            "symptom": forms.Textarea(attrs={"rows": 3, "class": "mono"}),
            "remedy": forms.Textarea(attrs={"rows": 4, "class": "mono"}),
            "prevention": forms.Textarea(attrs={"rows": 2}),
            "environment": forms.Textarea(attrs={"rows": 2}),
            "occurred_on": DateInput(),
            "resolved_on": DateInput(),
        }
        help_texts = {name: HELP[name] for name in HELP if name not in ("tags", "slug")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            del self.fields["slug"]
            self.initial["tags"] = ", ".join(self.instance.tag_names)
        self.fields["root_cause"].widget = forms.TextInput()

    def clean_tags(self) -> list[str]:
        """The comma-separated names, held to the incident's tag rules."""
        try:
            return tag_names_clean(self.cleaned_data["tags"].split(","))
        except ValidationError as error:
            raise forms.ValidationError(error.message_dict["tags"]) from None


class RecurrenceForm(forms.ModelForm):
    class Meta:
        model = Recurrence
        fields = ["occurred_on", "note"]
        widgets = {"occurred_on": DateInput(), "note": forms.Textarea(attrs={"rows": 2})}


class SignatureForm(forms.ModelForm):
    class Meta:
        model = Signature
        fields = ["pattern", "note", "examples", "unless", "lead_only", "enabled"]
        widgets = {
            "pattern": forms.TextInput(attrs={"class": "mono"}),
            "unless": forms.TextInput(attrs={"class": "mono"}),
            "examples": forms.Textarea(attrs={"rows": 4, "class": "mono"}),
        }


class AnalysisForm(forms.Form):
    log = forms.CharField(
        label=_("Log tail"),
        required=False,
        strip=False,  # a log's first line may be indented: keep it as pasted
        widget=forms.Textarea(
            attrs={
                "rows": 14,
                "class": "mono",
                "placeholder": _("Paste the last lines of the failing job's log"),
            }
        ),
    )
    file = forms.FileField(label=_("…or upload a log file"), required=False)
    log_path = forms.CharField(
        label=_("Log path (optional)"),
        required=False,
        max_length=500,
        help_text=_("e.g. exp/tri3/log/align.1.log — the path tells which stage broke."),
    )

    def clean(self):
        cleaned = super().clean()
        upload, text = cleaned.get("file"), cleaned.get("log", "")
        if upload is not None and text.strip():
            raise forms.ValidationError(
                _("Paste a log tail or choose a file, not both: which one should be analysed?")
            )
        if upload is not None:
            cleaned["data"] = upload  # of a large file, only its tail is read
        elif text.strip():
            cleaned["data"] = text
        else:
            raise forms.ValidationError(_("Paste a log tail or choose a file."))
        return cleaned


class FeedbackForm(forms.Form):
    incident = forms.SlugField(max_length=80)
    verdict = forms.ChoiceField(choices=Feedback.Verdict.choices)
