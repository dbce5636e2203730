# One image for every Seqline process; the command picks the role (server, gateway, worker, admin).
# Node 20 on Debian bookworm: glibc 2.36 matches the uWebSockets.js native binary for Node 20.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs ./libs
COPY apps ./apps
COPY schema ./schema
RUN npm ci --omit=dev --no-audit --no-fund && npm install --no-save tsx@4 && npm cache clean --force
ENV NODE_ENV=production
EXPOSE 8080
CMD ["node", "--import", "tsx", "apps/server/src/main.ts"]
