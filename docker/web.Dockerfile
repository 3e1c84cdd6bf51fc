# The web app; applies migrations and seeds the demo on start.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY packages ./packages
COPY apps/web ./apps/web
COPY apps/runner/package.json ./apps/runner/package.json
COPY e2e/package.json ./e2e/package.json
COPY prisma ./prisma
COPY tsconfig.base.json ./
RUN npm ci --no-fund --no-audit && npm run -w @troupe/db generate && npm run -w @troupe/web build
ENV NODE_ENV=production
# Room to parse a long URL, so the proxy answers 414 (apps/web/src/lib/requestShape.ts) instead of a dropped connection.
ENV NODE_OPTIONS=--max-http-header-size=262144
# The web app holds no reason to be root (issue 30): it runs as the image's unprivileged `node` user, which
# owns only Next's cache folder.
RUN mkdir -p apps/web/.next/cache && chown -R node:node apps/web/.next/cache
USER node
EXPOSE 3000
CMD ["sh", "-c", "npm run -s -w @troupe/db migrate && npm run -s -w @troupe/db seed && cd apps/web && exec npx next start -p ${PORT:-3000}"]
