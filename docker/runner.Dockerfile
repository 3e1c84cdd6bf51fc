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
CMD ["npx", "tsx", "apps/runner/src/main.ts"]
