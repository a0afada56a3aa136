from django.contrib.auth import login
from django.shortcuts import redirect, render

from webapp.accounts.forms import SignUpForm
from webapp.accounts.roles import PLAYER
from webapp.accounts.services import user_grant_role


def signup(request):
    if request.user.is_authenticated:
        return redirect("core:home")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        user_grant_role(user=user, role=PLAYER)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("core:home")
    return render(request, "accounts/signup.html", {"form": form})
