"""The embedded default for `make run`: one machine, no services."""

from webapp.settings.base import *  # noqa: F401,F403
from webapp.settings.base import env

DEBUG = env.bool("DEBUG", default=False)  # `manage.py devrun --debug` (or DEBUG=true) turns it on
