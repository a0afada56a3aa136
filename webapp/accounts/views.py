from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.db import IntegrityError, transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from webapp.accounts.forms import SignUpForm
from webapp.accounts.roles import PLAYER
from webapp.accounts.services import user_grant_role
from webapp.play.claims import claimable_games

# the context of templates/accounts/form.html on each page
LOGIN_PAGE = {
    "title": "Log in",
    "submit": "Log in",
    "other": {"question": "No account?", "url": "accounts:signup", "label": "Sign up"},
}
SIGNUP_PAGE = {
    "title": "Sign up",
    "submit": "Create account",
    "intro": "An account keeps your games, your statistics and your place on the People board.",
    "other": {"question": "Already have an account?", "url": "accounts:login", "label": "Log in"},
}


def _next_url(request) -> str:
    """The page to go back to after signing up, if it is one of this site's."""
    url = request.POST.get("next") or request.GET.get("next") or ""
    safe = url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return url if safe else ""


class LoginPage(auth_views.LoginView):
    template_name = "accounts/form.html"
    extra_context = LOGIN_PAGE

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "guest_games": claimable_games(self.request)}


def _player_created(form):
    """The new account with the player role, or None with the error at the username when the same
    name was saved since the form checked it (a double-submitted form)."""
    try:
        with transaction.atomic():
            user = form.save()
            user_grant_role(user=user, role=PLAYER)
    except IntegrityError:
        form.add_error(
            "username", form.instance.unique_error_message(type(form.instance), ["username"])
        )
        return None
    return user


def signup(request):
    if request.user.is_authenticated:
        return redirect("core:home")
    form = SignUpForm(request.POST or None)
    next_url = _next_url(request)
    guest_games = claimable_games(request)
    user = _player_created(form) if request.method == "POST" and form.is_valid() else None
    if user is not None:
        # logging in makes the session's guest games the account's (webapp.play.claims)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        welcome = f"Welcome, {user.get_username()}!"
        if guest_games:
            were = (
                "game you played as a guest is"
                if guest_games == 1
                else "games you played as a guest are"
            )
            welcome += f" The {guest_games} {were} now in your history."
        messages.success(request, welcome)
        return redirect(next_url or reverse("play:me" if guest_games else "core:home"))
    context = {**SIGNUP_PAGE, "form": form, "next": next_url, "guest_games": guest_games}
    return render(request, "accounts/form.html", context)
