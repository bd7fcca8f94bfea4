# ctxtrio in a container. stdio by default (a host such as LM Studio runs `docker run -i`);
# HTTP with `--http --host 0.0.0.0 --allow-remote` and CTX_HTTP_TOKEN set.
FROM python:3.12-slim

# The warm-start answers (platformdirs' cache dir) live in the data volume too, so a
# `docker run --rm` spawn answers the host's first requests from them (~0.2 s, not ~4 s).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    CTX_DATA_DIR=/data \
    XDG_CACHE_HOME=/data/.cache \
    CTX_LLM_BASE_URL=http://host.docker.internal:1234/v1

RUN useradd --create-home --uid 10001 ctxtrio \
    && mkdir -p /data \
    && chown ctxtrio:ctxtrio /data

WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY ctxtrio ./ctxtrio
RUN pip install --no-cache-dir . && rm -rf /root/.cache

USER ctxtrio
VOLUME ["/data"]
EXPOSE 3001

# Reads the server's own flags and environment (/proc), so `--http --port N --http-token T`
# given as flags is checked as well as CTX_* variables; a stdio server is healthy while it runs.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["python", "-m", "ctxtrio.cli.healthcheck"]

ENTRYPOINT ["ctxtrio"]
CMD ["--stdio"]
