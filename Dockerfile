# The OpenWork daemon in a container: built as wheels in one stage, installed into a slim,
# non-root image with bubblewrap (the sandbox of the bash tool). See docker-compose.yml.

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY migrations ./migrations
COPY openwork_core ./openwork_core
COPY openwork_chat_state ./openwork_chat_state
COPY openwork_tools ./openwork_tools
# the distribution and every dependency as wheels: the runtime stage needs no compiler or network
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
# bubblewrap from the distribution (a security update must not wait for a pin bump); the data
# dir and the workspaces mount point exist owned by the runtime user, so that a fresh named volume
# mounted there inherits that ownership
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin openwork \
    && install -d -o 10001 -g 10001 /home/openwork/data /workspaces
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels /wheels/openwork_core-*.whl \
    && rm -rf /wheels
USER 10001
WORKDIR /home/openwork
ENV OPENWORK_HOME=/home/openwork/data \
    OPENWORK_LISTEN=0.0.0.0:7420 \
    OPENWORK_ALLOW_REMOTE=true \
    PYTHONUNBUFFERED=1
EXPOSE 7420
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:7420/v1/health', timeout=2).status == 200 else 1)"]
ENTRYPOINT ["openwork"]
CMD ["serve"]
