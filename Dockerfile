# One image for every Seqline process; the command picks the role (server, gateway, worker, admin).
# Node 20 on Debian bookworm: glibc 2.36 matches the uWebSockets.js native binary for Node 20.

# Build stage: every dependency (TypeScript, esbuild), then `npm run build` writes each package's
# dist/. Only package.json files, dist/ and the admin bin are handed to the runtime stage.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.emit.json tsconfig.build.json ./
COPY libs ./libs
COPY apps ./apps
RUN npm ci --no-audit --no-fund
RUN npm run build --silent \
 && mkdir /out \
 && tar -cf - libs/*/package.json apps/*/package.json libs/*/dist apps/*/dist apps/admin/bin | tar -xf - -C /out

# Runtime stage: production dependencies and built JavaScript — no TypeScript sources, no tsx.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY --from=build /out ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY schema ./schema
EXPOSE 8080
CMD ["node", "apps/server/dist/main.js"]
