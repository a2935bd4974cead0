# One image for every service; the compose file picks the service with its command.
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm install, not npm ci: see .ci/run (npm refuses its own lock file for jest 30's optional bindings)
RUN npm install --no-audit --no-fund
COPY . .
RUN npx tsc --noEmit -p tsconfig.json

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app /app
EXPOSE 3000
ENTRYPOINT ["node", "--require", "tsx/cjs"]
CMD ["bin/platform.ts"]
