# The gateway's production image.
#
# Two stages: `build` installs every dependency (dev tools included), compiles the server (and the dashboard,
# which `npm run build` also builds) and then drops the dev dependencies; the runtime stage carries only the
# production dependencies, package.json, LICENSE and dist/, and runs as the unprivileged `node` user. Sources, tests
# and the dashboard's sources never reach it.
#
# The base image is node:20-bookworm-slim; another can be given with --build-arg NODE_IMAGE=...
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles its native module when no prebuilt binary can be downloaded for this platform, which
# needs a compiler, make and Python; node-gyp takes Node's headers from the base image (/usr/local/include/node)
# instead of downloading them.
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ make python3 \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
WORKDIR /app
# Extra certificate authorities (PEM text) for a registry reached through a TLS-intercepting proxy. Only this
# stage's npm sees them, from a file removed in the same step; the runtime stage never declares the argument.
ARG EXTRA_CA_CERTS=""
COPY package.json package-lock.json ./
# --include=dev: the build needs TypeScript and Vite, whatever NODE_ENV or npm's `omit` a base image or the build's
# environment sets (NODE_ENV=production alone makes `npm ci` leave them out, and the build then fails with
# "tsc: not found"). The check after it names the cause at this step, not at the build's.
RUN if [ -n "$EXTRA_CA_CERTS" ]; then printf '%s\n' "$EXTRA_CA_CERTS" > /tmp/extra-ca.pem; \
      export NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem; fi \
 && npm ci --include=dev --no-audit --no-fund \
 && rm -f /tmp/extra-ca.pem \
 && { test -x node_modules/.bin/tsc || { echo "npm ci left out the dev dependencies (node_modules/.bin/tsc is missing)" >&2; exit 1; }; }
COPY . .
RUN npm run build \
 && rm -f dist/.tsbuildinfo \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    GATEWAY_DATA_DIR=/data
WORKDIR /app
# Owned by root: the gateway runs as `node` and can write only its data directory.
COPY --from=build /app/package.json /app/LICENSE ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node is PID 1 and handles SIGTERM itself: it stops accepting, finishes in-flight work and exits 0.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
