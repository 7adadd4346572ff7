"""The template tags other pages use to link into the runbooks, one query each."""

import pytest
from django.template import Context, Template
from django.utils import translation

from incidents.models import Incident
from runbooks.models import Runbook
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


def _render(source: str, **context) -> str:
    return Template("{% load runbooks %}" + source).render(Context(context))


def test_an_incident_links_the_runbooks_of_its_stage_and_discipline(
    runbooks, django_assert_num_queries
):
    incident = IncidentFactory.build(stage="train", discipline="tiny-sample")
    with django_assert_num_queries(1):
        html = _render("{% runbooks_for_incident incident %}", incident=incident)
    expected = Runbook.objects.filter(stage="train") | Runbook.objects.filter(
        discipline="tiny-sample"
    )
    for runbook in expected:
        assert f'href="{runbook.get_absolute_url()}"' in html
    assert expected.count() == html.count("<li>") >= 3
    assert 'href="/runbooks/diagnose-build/"' not in html
    assert html.index("Diagnose a failed training stage") < html.index(
        "Checklist: tiny-sample trial"
    )


def test_the_incident_links_follow_the_page_language(runbooks):
    incident = IncidentFactory.build(stage="data", discipline="validate-first")
    with translation.override("zh-hans"):
        html = _render("{% runbooks_for_incident incident %}", incident=incident)
    assert "数据准备失败排查" in html


def test_an_incident_with_no_matching_runbook_renders_nothing(db, django_assert_num_queries):
    incident = IncidentFactory.build(stage="serve", discipline="reconcile")
    with django_assert_num_queries(1):
        assert _render("{% runbooks_for_incident incident %}", incident=incident).strip() == ""


def test_an_analysis_links_the_diagnose_runbook_of_its_stage(runbooks, django_assert_num_queries):
    with django_assert_num_queries(1):
        html = _render("{% diagnose_runbook stage %}", stage="serve")
    assert 'href="/runbooks/diagnose-serve/"' in html
    assert "Diagnose a failing decoding job or inference service" in html


@pytest.mark.parametrize("stage", ["", None])
def test_an_analysis_without_a_stage_renders_nothing_without_a_query(
    runbooks, django_assert_num_queries, stage
):
    with django_assert_num_queries(0):
        assert _render("{% diagnose_runbook stage %}", stage=stage).strip() == ""


def test_the_tags_render_on_a_real_incident(alice_client, catalog, runbooks):
    incident = Incident.objects.get(slug="gpu-oom")
    html = _render("{% runbooks_for_incident incident %}", incident=incident)
    assert f'href="/runbooks/diagnose-{incident.stage}/"' in html
    assert f'href="/runbooks/checklist-{incident.discipline}/"' in html
