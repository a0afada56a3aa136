"""Celery app and thin tasks that call webapp services and training runners."""
