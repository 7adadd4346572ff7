from rest_framework.routers import SimpleRouter

from runbooks import api

app_name = "runbooks-api"

router = SimpleRouter()
router.register("runbooks", api.RunbookViewSet, basename="runbook")
router.register("checklist-runs", api.ChecklistRunViewSet, basename="checklist-run")

urlpatterns = router.urls
