from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

urlpatterns = [
    path("login/", views.SignInView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("language/", views.language_set, name="language-set"),
    path("account/", views.account, name="account"),
    path("kb.py", views.kb_script, name="kb-script"),
]
