"""The 20Q Lab web platform (Django project and its apps)."""

# Load the Celery app so @shared_task uses it whenever Django starts.
from workers.celery import app as celery_app

__all__ = ["celery_app"]
