# The Testbay server (API, dashboard, embedded local agent): docs/operating.md, "Container images".
#
#   docker build -t testbay-server .
#   docker run -d -p 8080:8080 -v testbay-data:/data testbay-server
#
# BASE_IMAGE: any Debian bookworm image with Node.js 20.19+ and npm in /usr/local (the official one by default;
# scripts/container-base.sh makes one locally where no image registry is reachable).
ARG BASE_IMAGE=node:20-bookworm-slim

# ---- build: the whole workspace installed and compiled as `npm ci` does on a developer's machine (README.md) ----
FROM ${BASE_IMAGE} AS build
# better-sqlite3 is compiled from source, against the headers Node.js installs in /usr/local/include/node: no
# prebuilt binary is downloaded (npm_config_build_from_source), so the build needs only the npm registry and a
# Debian mirror. The same layer in Dockerfile.agent, so the two builds share it.
RUN if ! command -v g++ >/dev/null || ! command -v make >/dev/null || ! command -v python3 >/dev/null; then \
      apt-get update \
      && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends g++ make python3 \
      && rm -rf /var/lib/apt/lists/*; \
    fi
ENV npm_config_nodedir=/usr/local \
    npm_config_build_from_source=true \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
WORKDIR /src
# The manifests first: the dependencies' layer is rebuilt only when one of them changes, not with every source edit.
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
COPY packages/agent/package.json packages/agent/
COPY packages/server/package.json packages/server/
COPY packages/web/package.json packages/web/
# No install scripts but the two the build needs (the root package.json's allowScripts): npm 10, which the
# official image carries, would otherwise run every package's, such as appium's driver downloads.
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3 esbuild
COPY . .
# The build of README.md (scripts/build.ts): packages/*/dist, the dashboard, the CLI bundle and the download
# tarballs. Up to here the same steps as Dockerfile.agent's, which reuses these layers.
RUN npm run build
# Only what the server needs at run time goes to /out: its production dependencies, the compiled client, agent and
# server packages (the server runs the local agent and imports both) and the dashboard's files.
RUN npm prune --omit=dev \
    && mkdir -p /out/packages/web \
    && cp -a package.json node_modules /out/ \
    && for name in client agent server; do \
         mkdir -p /out/packages/$name \
         && cp -a packages/$name/package.json packages/$name/bin packages/$name/dist /out/packages/$name/ \
         && if [ -d packages/$name/node_modules ]; then cp -a packages/$name/node_modules /out/packages/$name/; fi; \
       done \
    && cp -a packages/web/package.json packages/web/dist /out/packages/web/ \
    && find /out/packages -name '*.tsbuildinfo' -delete \
    && find /out/packages/*/dist \( -name '*.d.ts' -o -name '*.d.ts.map' \) -delete

# ---- runtime: compiled code and production dependencies, run by a user without privileges ----
FROM ${BASE_IMAGE}
# A fixed UID/GID, so that a bind-mounted data directory can be given to it (chown 10001:10001 DIR).
RUN groupadd --gid 10001 testbay \
    && useradd --uid 10001 --gid testbay --home-dir /data --no-create-home --shell /usr/sbin/nologin testbay \
    && mkdir -p /data \
    && chown testbay:testbay /data \
    && chmod 0700 /data
COPY --from=build /out /opt/testbay
RUN ln -s /opt/testbay/packages/server/bin/testbay-server.js /usr/local/bin/testbay-server
# Listen on every interface of the container (the default 127.0.0.1 would be unreachable from outside it); data
# (SQLite database, blobs, signing key, credentials.json) in the volume.
ENV NODE_ENV=production \
    TESTBAY_HOST=0.0.0.0 \
    TESTBAY_PORT=8080 \
    TESTBAY_DATA_DIR=/data
VOLUME /data
WORKDIR /data
EXPOSE 8080
USER 10001:10001
# /healthz answers 200 while the process serves (API.md §2). Asked with bash's /dev/tcp, as the image has no curl:
# a check costs a few milliseconds, where starting Node for it took over 5 s on a loaded 2-core machine.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${TESTBAY_PORT:-8080} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
# testbay-server's launcher starts Node with its flags (bin/testbay-server.js); any admin command runs the same way:
# docker run --rm -v testbay-data:/data IMAGE org create acme
ENTRYPOINT ["testbay-server"]
CMD ["start"]
