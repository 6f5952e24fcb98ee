# syntax=docker/dockerfile:1
# Collab image for production mode: the same image runs the web processes (Daphne), the Celery
# workers and the release step (migrate). See docker-compose.yml and the README's "Production".

# --- build: dependencies into a virtualenv, compiled where they must be --------------------------
FROM python:3.11-slim-bookworm AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
# A C toolchain for dependencies without a wheel for this platform (and, for the embedded local
# model, cmake: llama-cpp-python compiles from source; GGML_NATIVE=OFF keeps it portable).
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake \
    && rm -rf /var/lib/apt/lists/*
ENV CMAKE_ARGS="-DGGML_NATIVE=OFF"
RUN python -m venv /venv
ENV PATH=/venv/bin:$PATH
WORKDIR /src
# Only the dependency list, so this layer is rebuilt when dependencies change, not on every edit.
# The code itself runs from /app (not installed into site-packages), where settings find the
# templates and static files beside it.
# EXTRAS names optional dependency groups of pyproject.toml to add, comma-separated; the model
# providers and the A2A client are small and come by default (--build-arg EXTRAS= leaves them out).
ARG EXTRAS="openai,anthropic,a2a"
COPY pyproject.toml ./
RUN python <<'PY' > requirements.txt
import os, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
requirements = list(project["dependencies"])
for extra in filter(None, os.environ.get("EXTRAS", "").split(",")):
    requirements += project["optional-dependencies"][extra.strip()]
print("\n".join(requirements))
PY
RUN pip install -r requirements.txt

# --- runtime -------------------------------------------------------------------------------------
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/venv/bin:$PATH \
    PYTHONPATH=/app \
    DJANGO_SETTINGS_MODULE=collab.settings \
    DATA_DIR=/data \
    STATIC_ROOT=/app/staticfiles
RUN useradd --system --create-home --uid 1000 collab \
    && mkdir -p /data \
    && chown collab:collab /data
COPY --from=build /venv /venv
WORKDIR /app
COPY . .
# Static files are collected (and compressed, with hashed names) once, at build time. The key is
# a throwaway used only by this command; the real one comes from SECRET_KEY(_FILE) at run time.
RUN SECRET_KEY=collectstatic-only-not-used-at-run-time-0123456789 \
    python manage.py collectstatic --noinput -v0
USER collab
EXPOSE 8000
# Web by default; docker-compose.yml overrides the command for the worker and migrate services.
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "collab.asgi:application"]
