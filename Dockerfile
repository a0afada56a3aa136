# One image, several roles (web, worker-cpu, beat, flower). The GPU worker builds FROM this with
# requirements/gpu.txt on a CUDA base (see docker-compose.yml).
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 DATA_DIR=/data
WORKDIR /app
COPY pyproject.toml README.md ./
COPY webapp webapp
COPY games games
COPY training training
COPY workers workers
COPY bench bench
COPY templates templates
COPY manage.py ./
RUN pip install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0" \
 && pip install -e . \
 && DJANGO_SETTINGS_MODULE=webapp.settings.local python manage.py collectstatic --noinput -v 0
EXPOSE 8000
CMD ["gunicorn", "webapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4"]
