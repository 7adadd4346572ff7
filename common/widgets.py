from django import forms


class DateInput(forms.DateInput):
    """A browser date picker. Its value is always ISO (2026-11-30), whatever the language:
    a browser drops any other form, and a form saved back would then erase the date."""

    input_type = "date"

    def __init__(self, attrs=None):
        super().__init__(attrs=attrs, format="%Y-%m-%d")
