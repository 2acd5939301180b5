FROM python:3.11-slim-trixie
WORKDIR /srv/planwright
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY pyproject.toml README.md ./
COPY app ./app
COPY agents ./agents
COPY tools ./tools
COPY prompts ./prompts
COPY evals ./evals
RUN pip install --no-cache-dir .
# Test runs execute workflows in OpenFn's own runtime: node 20 + npm from Debian 13, then the
# pinned @openfn/runtime and adaptors (agents/testrun/node/package-lock.json) via npm ci.
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm util-linux \
    && rm -rf /var/lib/apt/lists/* \
    && python -m agents.testrun.install /opt/planwright/openfn-runtime \
    && python -m app.web.assets /opt/planwright/web-assets \
    && node --version
ENV PLANWRIGHT_RUN_RUNTIME_DIR=/opt/planwright/openfn-runtime \
    PLANWRIGHT_WEB_ASSETS_DIR=/opt/planwright/web-assets
EXPOSE 8000
# Inside a container the service must listen on all interfaces; the service
# refuses that without auth tokens, so set PLANWRIGHT_TOKENS when running it.
CMD ["planwright", "serve", "--host", "0.0.0.0", "--port", "8000"]
