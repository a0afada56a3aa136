from django.contrib.auth.forms import UserCreationForm

HELP = {
    "username": "Shown on the leaderboards and your player page: letters, digits and @ . + - _ "
    "(at most 150 characters).",
    "email": "Never shown to anyone.",
    "password1": "At least 8 characters, not only digits, not a common password and not like "
    "your username.",
    "password2": "The same password again, to catch a typo.",
}


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
