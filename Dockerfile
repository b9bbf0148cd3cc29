# syntax=docker/dockerfile:1
#
# One image for every Tessera process. Standalone by default (all four services, embedded datastore);
# Kubernetes runs the same image once per service with
#   TESSERA_MODE=distributed TESSERA_SERVICES=<admin-api|graphql-gateway|function-runtime|sync-service>
# (see deploy/README.md). Build: docker build -t tessera:dev .

ARG NODE_IMAGE=node:20-bookworm-slim

# The workspace manifests alone, so the dependency layer below is rebuilt only when a package.json or the
# lock file changes, not on every source edit. This stage reruns on any change, but its output does not.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir -p /out \
 && cp package.json package-lock.json /out/ \
 && for manifest in apps/*/package.json libs/*/package.json; do \
      mkdir -p "/out/$(dirname "$manifest")" && cp "$manifest" "/out/$manifest"; \
    done

FROM ${NODE_IMAGE} AS build
# isolated-vm compiles a native addon when no prebuilt binary matches the platform.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=manifests /out/ ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && find apps libs -name '*.tsbuildinfo' -delete

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    TESSERA_MODE=standalone \
    TESSERA_DATA_DIR=/var/lib/tessera \
    PORT=8080
WORKDIR /app
# Code and dependencies stay owned by root, so the process cannot rewrite them; only the data directory
# is writable. Workspace packages are symlinks under node_modules/@tessera, which COPY keeps.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/apps ./apps
COPY --from=build /app/libs ./libs
COPY --from=build /app/examples ./examples
RUN mkdir -p /var/lib/tessera && chown 1000:1000 /var/lib/tessera
# The image's `node` user, by number so Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# isolated-vm (function runtime) needs --no-node-snapshot on Node 20. Node runs as PID 1 and handles
# SIGTERM itself (graceful shutdown in apps/server/src/main.ts).
CMD ["node", "--no-node-snapshot", "apps/server/dist/main.js"]
