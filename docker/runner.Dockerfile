# One runner per GPU host: the Node BullMQ worker plus the Python runtime (with the gpu extra).
FROM nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm python3 python3-venv python3-dev build-essential \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc tsconfig.base.json ./
COPY packages ./packages
COPY apps/runner ./apps/runner
COPY apps/web/package.json ./apps/web/package.json
COPY e2e/package.json ./e2e/package.json
COPY prisma ./prisma
RUN npm ci --no-fund --no-audit && npm run -w @troupe/db generate
COPY gpu-runtime ./gpu-runtime
COPY kernels ./kernels
RUN python3 -m venv /app/.venv && /app/.venv/bin/pip install --no-cache-dir torch \
    && /app/.venv/bin/pip install --no-cache-dir -e "kernels" -e "gpu-runtime[gpu,grpc]"
ENV TROUPE_PYTHON=/app/.venv/bin/python
# Who runs what (issue 30). The runner process runs as root only to hand each run its folder and drop the
# trainer to the unprivileged `troupe` user (setpriv; Docker's default capabilities allow it): the trainer
# then cannot read the runner's environment (DATABASE_URL, REDIS_URL) or any file of root's. The Hugging Face
# cache lives outside /root so that user can read it. A runner started as `troupe` itself (`user: troupe` in
# compose) also works, but its runs then share its uid and could read its environment through /proc.
RUN useradd --system --uid 10001 --user-group --home-dir /nonexistent --shell /usr/sbin/nologin troupe \
    && mkdir -p /var/cache/huggingface /app/.troupe/runs && chown troupe:troupe /var/cache/huggingface
ENV HF_HOME=/var/cache/huggingface TROUPE_RUN_USER=troupe
USER root
CMD ["npx", "tsx", "apps/runner/src/main.ts"]
