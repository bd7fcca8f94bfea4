# ctxtrio in a container. stdio by default (a host such as LM Studio runs `docker run -i`);
# HTTP with `--http --host 0.0.0.0 --allow-remote` and CTX_HTTP_TOKEN set.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    CTX_DATA_DIR=/data \
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

# Meaningful in HTTP mode only; in stdio mode there is no socket to ask, so it reports healthy.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD python -c "\
import os, sys, urllib.request; \
sys.exit(0) if os.environ.get('CTX_TRANSPORT') != 'http' else None; \
req = urllib.request.Request('http://127.0.0.1:%s/health' % os.environ.get('CTX_HTTP_PORT', '3001')); \
tok = os.environ.get('CTX_HTTP_TOKEN'); \
tok and req.add_header('Authorization', 'Bearer ' + tok); \
urllib.request.urlopen(req, timeout=4)"

ENTRYPOINT ["ctxtrio"]
CMD ["--stdio"]
