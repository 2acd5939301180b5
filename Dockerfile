FROM python:3.11-slim
WORKDIR /srv/planwright
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY pyproject.toml README.md ./
COPY app ./app
COPY agents ./agents
COPY tools ./tools
COPY prompts ./prompts
COPY evals ./evals
RUN pip install --no-cache-dir .
EXPOSE 8000
# Inside a container the service must listen on all interfaces; the service
# refuses that without auth tokens, so set PLANWRIGHT_TOKENS when running it.
CMD ["planwright", "serve", "--host", "0.0.0.0", "--port", "8000"]
