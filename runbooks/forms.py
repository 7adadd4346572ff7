from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django import forms
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from common.choices import Discipline, Stage
from common.translation import phrase_text
from runbooks import calculators
from runbooks.models import MAX_STEPS, STEP_LIMITS, Calculator, ChecklistRun, Kind, StepText

NONE = [("", "—")]
STEP_NOTE_MAX = 500


def _number(label, *, placeholder: str = "", help_text="") -> forms.CharField:
    # A text box, not <input type=number>: the calculator's own messages explain bad input
    # (a browser would refuse it silently, in its own words).
    return forms.CharField(
        label=label,
        help_text=help_text,
        required=False,
        max_length=30,
        widget=forms.TextInput(
            attrs={"inputmode": "decimal", "autocomplete": "off", "placeholder": placeholder}
        ),
    )


def _unit(units, initial: str, label) -> forms.CharField:
    return forms.CharField(
        required=False,
        initial=initial,
        label=label,
        widget=forms.Select(choices=[(unit, unit) for unit in units]),
    )


class CalculatorForm(forms.Form):
    """Inputs go to a plain-Python calculator; its problems come back as translated errors."""

    calculate: Callable[..., object]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.result = None

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        try:
            self.result = type(self).calculate(**cleaned)
        except calculators.CalculatorInputError as error:
            for problem in error.problems:
                field = problem.field if problem.field in self.fields else None
                self.add_error(field, phrase_text(problem.phrase))
        return cleaned


class MemoryHeadroomForm(CalculatorForm):
    calculate = staticmethod(calculators.memory_headroom)

    batch_a = _number(_("Batch size, first run"), placeholder="4")
    memory_a = _number(_("Peak memory, first run"), placeholder="21000")
    batch_b = _number(_("Batch size, second run"), placeholder="8")
    memory_b = _number(_("Peak memory, second run"), placeholder="33000")
    memory_unit = _unit(calculators.MEMORY_UNITS, "MiB", _("Unit of the peaks"))
    card_memory = _number(_("Memory of this card"), placeholder="64")
    card_unit = _unit(calculators.MEMORY_UNITS, "GiB", _("Unit of the card memory"))
    margin_percent = _number(
        label=_("Safety margin (%)"),
        help_text=_("Memory kept free for fragmentation and longer samples; about 10%."),
    )
    planned_batch = _number(
        label=_("Batch size you plan to use (optional)"),
        help_text=_("For example the one copied from another card: the result says if it fits."),
    )

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("initial", {"margin_percent": "10"})
        super().__init__(*args, **kwargs)


class ScalingEfficiencyForm(CalculatorForm):
    calculate = staticmethod(calculators.scaling_efficiency)

    compute_time = _number(
        label=_("Compute time per step (T)"),
        placeholder="420",
        help_text=_("One card's step time with the same per-card batch, without communication."),
    )
    compute_unit = _unit(calculators.TIME_UNITS, "ms", _("Unit of T"))
    communication_time = _number(
        label=_("Exposed communication time per step (C)"),
        placeholder="60",
        help_text=_("Step time on N nodes minus the single-card step time."),
    )
    communication_unit = _unit(calculators.TIME_UNITS, "ms", _("Unit of C"))
    cards = _number(_("Number of cards (optional)"), placeholder="16")


CALCULATOR_FORMS: dict[str, type[CalculatorForm]] = {
    Calculator.MEMORY_HEADROOM: MemoryHeadroomForm,
    Calculator.SCALING_EFFICIENCY: ScalingEfficiencyForm,
}


def calculator_form(name: str, data=None) -> CalculatorForm | None:
    """The calculator a runbook shows (bound to `data` when given), or None."""
    form_class = CALCULATOR_FORMS.get(name)
    return None if form_class is None else form_class(data)


class RunbookForm(forms.Form):
    title = forms.CharField(label=_("Title"), max_length=200)
    summary = forms.CharField(
        label=_("Summary"), max_length=4000, widget=forms.Textarea(attrs={"rows": 4})
    )
    kind = forms.ChoiceField(label=_("Kind"), choices=Kind.choices)
    stage = forms.ChoiceField(label=_("Stage"), choices=NONE + Stage.choices, required=False)
    discipline = forms.ChoiceField(
        label=_("Discipline"), choices=NONE + Discipline.choices, required=False
    )
    calculator = forms.ChoiceField(
        label=_("Calculator"), choices=NONE + Calculator.choices, required=False
    )
    # The language of the text being edited and the version loaded: see runbook_update.
    text_language = forms.ChoiceField(choices=settings.LANGUAGES, widget=forms.HiddenInput)
    revision = forms.CharField(widget=forms.HiddenInput)

    def clean_revision(self) -> datetime:
        try:
            return datetime.fromisoformat(self.cleaned_data["revision"])
        except ValueError:
            raise forms.ValidationError(_("Reload the page and edit again.")) from None


class StepForm(forms.Form):
    text = forms.CharField(
        label=_("What to do"),
        required=False,
        max_length=STEP_LIMITS["text"],
        widget=forms.Textarea(attrs={"rows": 3}),
    )
    command = forms.CharField(
        label=_("Command (optional)"),
        required=False,
        strip=False,
        max_length=STEP_LIMITS["command"],
        widget=forms.Textarea(attrs={"rows": 3, "class": "mono", "spellcheck": "false"}),
    )
    expected = forms.CharField(
        label=_("Expected output (optional)"),
        required=False,
        max_length=STEP_LIMITS["expected"],
        widget=forms.Textarea(attrs={"rows": 2}),
    )

    def clean(self):
        cleaned = super().clean()
        if (cleaned.get("command", "").strip() or cleaned.get("expected")) and not cleaned.get(
            "text"
        ):
            self.add_error("text", _("Say what this step is for; the command alone is not enough."))
        return cleaned


class BaseStepFormSet(forms.BaseFormSet):
    def clean(self):
        super().clean()
        if any(self.errors) or not self.management_form.is_valid():
            return  # what is wrong is said already (a form posted without its formset data)
        if not self.steps():
            raise forms.ValidationError(_("A runbook needs at least one step."))

    def steps(self) -> list[dict[str, str]]:
        """The steps in their new order; deleted and blank ones left out."""
        return [
            {name: form.cleaned_data.get(name, "") for name in ("text", "command", "expected")}
            for form in self.ordered_forms
            if form.cleaned_data.get("text")
        ]


StepFormSet = forms.formset_factory(
    StepForm,
    formset=BaseStepFormSet,
    extra=2,
    can_order=True,
    can_delete=True,
    max_num=MAX_STEPS,
    validate_max=True,
    absolute_max=MAX_STEPS + 10,
)


@dataclass(frozen=True)
class RunRow:
    step: StepText
    ticked: bool
    note: str
    errors: list


class ChecklistRunForm(forms.Form):
    note = forms.CharField(
        label=_("Note on this run"),
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    def __init__(self, *args, run: ChecklistRun, **kwargs):
        kwargs.setdefault(
            "initial",
            {
                "note": run.note,
                "ticked": [str(index) for index in run.ticked],
                **{f"step_note_{key}": text for key, text in run.step_notes.items()},
            },
        )
        super().__init__(*args, **kwargs)
        self.run = run
        self.fields["ticked"] = forms.TypedMultipleChoiceField(
            choices=[(str(index), str(index + 1)) for index in range(run.step_count)],
            coerce=int,
            required=False,
        )
        for index in range(run.step_count):
            self.fields[f"step_note_{index}"] = forms.CharField(
                required=False, max_length=STEP_NOTE_MAX
            )

    def step_notes(self) -> dict[int, str]:
        return {
            index: self.cleaned_data[f"step_note_{index}"]
            for index in range(self.run.step_count)
            if self.cleaned_data.get(f"step_note_{index}")
        }

    def rows(self, steps: tuple[StepText, ...]) -> list[RunRow]:
        """One row per step the run counts, with what this form shows for it."""
        ticked = {str(value) for value in (self["ticked"].value() or ())}
        return [
            RunRow(
                step=step,
                ticked=str(step.index) in ticked,
                note=self[f"step_note_{step.index}"].value() or "",
                errors=self[f"step_note_{step.index}"].errors,
            )
            for step in steps[: self.run.step_count]
        ]
