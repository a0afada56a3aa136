from django.core.management.base import BaseCommand, CommandError

from webapp.accounts.roles import ROLES
from webapp.accounts.services import user_create


class Command(BaseCommand):
    help = "Create a user with roles (player, annotator, researcher)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", required=True)
        parser.add_argument("--role", action="append", choices=ROLES, default=None)

    def handle(self, *args, username, password, role, **options):
        try:
            user = user_create(
                username=username, password=password, roles=tuple(role or ["player"])
            )
        except Exception as exc:  # validation errors are shown, not raised
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"created {user.username} with roles {', '.join(role or ['player'])}")
