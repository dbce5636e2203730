# One image for every Seqline process; the command picks the role (server, gateway, worker, admin).
# Node 24, the line CI runs the whole suite on. uWebSockets.js has no native binary for Node 24, so
# the gateways run on the `ws` package (with its native helpers, bufferutil), chosen outright rather
# than found missing at every start (apps/gateway/src/transport/select.ts).

# Build stage: every dependency (TypeScript, esbuild), then `npm run build` writes each package's
# dist/. Only package.json files, dist/ and the admin bin are handed to the runtime stage.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.emit.json tsconfig.build.json ./
COPY libs ./libs
COPY apps ./apps
RUN npm ci --no-audit --no-fund
RUN npm run build --silent \
 && mkdir /out \
 && tar -cf - libs/*/package.json apps/*/package.json libs/*/dist apps/*/dist apps/admin/bin | tar -xf - -C /out

# Runtime stage: production dependencies and built JavaScript — no TypeScript sources, no tsx.
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production SEQLINE_TRANSPORT=ws
COPY package.json package-lock.json ./
COPY --from=build /out ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY schema ./schema
EXPOSE 8080
# The embedded server with the V8 flags the benchmarks ran with, as `npm start` (docs/decisions.md, "Worker heap").
CMD ["node", "--max-semi-space-size=64", "apps/server/dist/main.js"]
