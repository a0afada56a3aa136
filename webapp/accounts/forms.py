from django import forms
from django.contrib.auth.forms import UserCreationForm

HELP = {
    "username": "Shown on the leaderboards and your player page: letters, digits and @ . + - _ "
    "(at most 150 characters).",
    "email": "Never shown to anyone.",
    "password1": "At least 8 characters, not only digits, not a common password and not like "
    "your username.",
    "password2": "The same password again, to catch a typo.",
}
RESERVED_USERNAMES = {"me"}  # /players/me/ is the visitor's own page (webapp.play.urls)


class SignUpForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")
        labels = {"email": "Email (optional)"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, text in HELP.items():
            self.fields[name].help_text = text
        self.fields["username"].widget.attrs.update(autocomplete="username", autofocus=True)
        self.fields["email"].widget.attrs["autocomplete"] = "email"

    def clean_username(self):
        username = super().clean_username()  # None when the name is taken (error already added)
        if username and username.lower() in RESERVED_USERNAMES:
            raise forms.ValidationError(f"“{username}” is reserved; choose another username.")
        return username
