from rest_framework.routers import SimpleRouter

from incidents.api import views

app_name = "incidents-api"

router = SimpleRouter()
router.register("incidents", views.IncidentViewSet, basename="incident")
router.register("signatures", views.SignatureViewSet, basename="signature")
router.register("recurrences", views.RecurrenceViewSet, basename="recurrence")
router.register("analyses", views.AnalysisViewSet, basename="analysis")
router.register("gaps", views.KnowledgeGapViewSet, basename="gap")

urlpatterns = router.urls
