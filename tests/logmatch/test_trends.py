"""A training loss that will not come down is evidence even when no line says so."""

import pytest

from incidents.logmatch import IncidentSpec, analyze, build_index
from incidents.logmatch.trends import MIN_POINTS, loss_trend


def _log(values, fmt="step {n} | lr 1e-4 | loss: {v} | 0.48 s/it"):
    return [fmt.format(n=n * 50, v=v) for n, v in enumerate(values)]


def test_a_falling_loss_is_no_finding():
    assert loss_trend(_log([4.1, 3.6, 3.2, 2.9, 2.7, 2.5, 2.4, 2.3])) is None


def test_a_loss_stuck_at_one_value_is_flat():
    trend = loss_trend(_log([10.375] * 10))
    assert trend.query == "the loss stays flat and does not converge"
    assert trend.seen == "the loss stays at 10.38 over the last 10 logged steps"
    assert trend.line == 9


def test_a_loss_that_swings_without_coming_down_oscillates():
    trend = loss_trend(_log([2.1, 3.4, 1.9, 3.8, 2.2, 3.5, 2.0, 3.6, 2.3]))
    assert trend.query == "the loss oscillates and does not converge"
    assert "between 1.9 and 3.8" in trend.seen


def test_a_rising_loss_diverges():
    trend = loss_trend(_log([1.2, 1.3, 1.5, 1.9, 2.6, 3.8, 5.5]))
    assert trend.query == "the loss rises and diverges"


def test_too_few_values_say_nothing():
    assert loss_trend(_log([3.0] * (MIN_POINTS - 1))) is None


@pytest.mark.parametrize(
    "fmt",
    [
        "epoch {n}: train loss: {v} - valid loss: 0.5",
        "{{'loss': {v}, 'grad_norm': 1.1, 'learning_rate': 2e-05, 'epoch': 0.{n}}}",
        " iteration {n}/ 1000 | lm loss: {v} | loss scale: 65536.0 |",
    ],
)
def test_it_reads_the_training_loss_of_common_formats(fmt):
    assert loss_trend(_log([2.5] * 8, fmt)).query == "the loss stays flat and does not converge"


def test_validation_losses_and_loss_scales_are_not_the_training_loss():
    lines = _log([0.9] * 8, "epoch {n} valid loss: {v} eval_loss={v} loss_scale: 1024")
    assert loss_trend(lines) is None


YOLO_HEADER = "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size"
YOLO_VALIDATION = (
    "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): "
    "100%|##########| 1/1 [00:09<00:00,  9.11s/it]",
    "                   all        200        449          0          0          0          0",
)


def _yolo(rows):
    lines = []
    for epoch, (box, cls, dfl) in enumerate(rows, 1):
        lines += [
            YOLO_HEADER,
            f"     {epoch}/1000      17.2G      {box}      {cls}      {dfl}         65        640: "
            "100%|##########| 4/4 [01:22<00:00, 20.68s/it]",
            *YOLO_VALIDATION,
        ]
    return lines


def test_a_loss_table_that_reads_nan_is_a_non_finite_loss():
    trend = loss_trend(_yolo([("nan", "nan", "nan")] * 3))
    assert trend.query == "the loss becomes nan or inf"
    assert trend.seen == "the loss column reads nan in the last 3 logged rows"
    assert trend.line == 9  # the third epoch's row


def test_the_rows_of_a_loss_table_are_read_and_summed():
    trend = loss_trend(_yolo([(1.5, 2.0, 1.25)] * MIN_POINTS))
    assert trend.query == "the loss stays flat and does not converge"
    assert trend.seen == f"the loss stays at 4.75 over the last {MIN_POINTS} logged steps"


def test_a_falling_loss_table_and_the_validation_table_under_it_say_nothing():
    rows = [(round(2.0 - 0.2 * n, 2), 1.0, 1.0) for n in range(MIN_POINTS + 2)]
    assert loss_trend(_yolo(rows)) is None


STUCK = IncidentSpec(
    slug="loss-divergence",
    title="Loss oscillates and does not converge",
    stage="train",
    symptom="",
    description="The loss oscillates and does not converge; lower the learning rate.",
)
OOM = IncidentSpec(
    slug="gpu-oom",
    title="GPU out of memory",
    stage="train",
    symptom="torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
)


def test_a_stuck_loss_is_a_lead_to_the_incident_that_describes_it_never_proof():
    report = analyze("\n".join(_log([10.375] * 12)), build_index([STUCK, OOM], []))
    top = report.suggestions[0]
    assert top.slug == "loss-divergence"
    assert not top.confident
    assert top.evidence[0].kind == "trend"
    assert "stays at 10.38" in top.why


def test_next_to_an_error_that_says_what_broke_the_loss_curve_is_background():
    lines = [*_log([10.375] * 12), OOM.symptom]
    report = analyze("\n".join(lines), build_index([STUCK, OOM], []))
    assert [s.slug for s in report.suggestions] == ["gpu-oom"]
