# One image for every service; the compose file picks the service with its command. The TypeScript is compiled
# once here: the image runs plain JavaScript (no TypeScript loader, no dev dependencies) as a non-root user.

# The runtime dependencies, installed where the build tools are (better-sqlite3 compiles when no prebuilt
# binary fits).
FROM node:20-bookworm AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# The compiler and its output: dist/ (never committed).
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=runtime-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# The released API descriptions, served at /api/<version>.json.
COPY openapi ./openapi
# DATA_DIR (./data) belongs to the user the services run as; a named volume mounted there takes its owner.
RUN mkdir -p data && chown node:node data
USER node
EXPOSE 3000
# Slim images have no curl: node itself asks the service's /healthz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "--enable-source-maps"]
CMD ["dist/bin/platform.js"]
