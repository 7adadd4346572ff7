from django.db import migrations


def merge_duplicate_open_runs(apps, schema_editor):
    """Before 0003 allows one open run per person, runbook and week: fold the extra open runs
    that double clicks left into the newest (the one a new start gave back) and drop them."""
    ChecklistRun = apps.get_model("runbooks", "ChecklistRun")
    seen = {}
    open_runs = ChecklistRun.objects.filter(finished_at__isnull=True, started_by__isnull=False)
    for run in open_runs.order_by("-started_at", "-id"):
        key = (run.runbook_id, run.started_by_id, run.iso_week)
        keep = seen.setdefault(key, run)
        if keep is run:
            continue
        keep.ticked = sorted(set(keep.ticked) | {i for i in run.ticked if i < keep.step_count})
        for index, text in run.step_notes.items():
            if int(index) < keep.step_count:
                keep.step_notes.setdefault(index, text)
        if run.note and run.note not in keep.note:
            keep.note = f"{keep.note}\n\n{run.note}".strip()
        keep.save(update_fields=["ticked", "step_notes", "note"])
        run.delete()


class Migration(migrations.Migration):
    # Not in 0003: PostgreSQL refuses to build an index on a table whose changed rows still have
    # deferred constraint checks pending in the same transaction.

    dependencies = [
        ('runbooks', '0001_initial'),
    ]

    operations = [
        migrations.RunPython(merge_duplicate_open_runs, migrations.RunPython.noop),
    ]
