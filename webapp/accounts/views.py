from django.contrib.auth import login
from django.shortcuts import redirect, render

from webapp.accounts.forms import SignUpForm
from webapp.accounts.roles import PLAYER
from webapp.accounts.services import user_grant_role

# the context of templates/accounts/form.html on each page
LOGIN_PAGE = {
    "title": "Log in",
    "submit": "Log in",
    "other": {"question": "No account?", "url": "accounts:signup", "label": "Sign up"},
}
SIGNUP_PAGE = {"title": "Sign up", "submit": "Create account"}


def signup(request):
    if request.user.is_authenticated:
        return redirect("core:home")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        user_grant_role(user=user, role=PLAYER)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("core:home")
    return render(request, "accounts/form.html", {**SIGNUP_PAGE, "form": form})
