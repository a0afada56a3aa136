from django.contrib.auth import views as auth_views
from django.urls import path

from webapp.accounts import views
from webapp.accounts.throttles import login_rate_limited

app_name = "accounts"
urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", login_rate_limited(views.LoginPage.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
