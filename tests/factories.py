import factory
from django.contrib.auth import get_user_model

from accounts.roles import user_set_role
from incidents import services
from incidents.models import Incident


class IncidentFactory(factory.Factory):
    """Builds incidents through the service, as the product does (search index included)."""

    class Meta:
        model = Incident

    slug = factory.Sequence(lambda n: f"incident-{n}")
    title = factory.Sequence(lambda n: f"Sample failure {n}")
    symptom = factory.Sequence(lambda n: f"RuntimeError: sample failure number {n} in worker")
    root_cause = "A sample root cause."
    remedy = "run `make clean && make`"
    discipline = "validate-first"
    prevention = ""
    stage = "train"
    severity = "medium"
    environment = ""
    reporter = None
    tags = ()
    language = "en"

    @classmethod
    def _create(cls, model_class, *, slug, reporter, tags, language, **data):
        return services.incident_create(
            data=data, reporter=reporter, language=language, slug=slug, tags=tags
        )

    @classmethod
    def _build(cls, model_class, *, tags, **data):
        return model_class(**data)


def user_with_role(username: str, role: str):
    """A user whose password is "pw-" + the username, in one role."""
    user = get_user_model().objects.create_user(username=username, password="pw-" + username)
    user_set_role(user=user, role=role)
    return user
