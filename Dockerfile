# The production image (README, "Deploying"): the steps a deployer runs by hand, in two stages.
#   docker build -t helpdesk .
#   docker run -p 3000:3000 -v helpdesk-data:/data -e HASH_KEY=… -e PUBLIC_URL=https://help.example.com helpdesk
# .ci/run runs this file's build-stage RUN lines in a clean clone, assembles the runtime stage's
# COPY lines into a folder and starts it as CMD does (there is no Docker on CI's machine).

# Build: every dependency, the build (Prisma client, GraphQL codegen, tsc into dist/), then
# the dev dependencies pruned. No NODE_ENV=production here: npm ci would omit the build tools.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

# Runtime: what the service reads when it runs, and nothing to build with.
FROM node:24-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
# the migrations, applied at start by the WebAssembly schema engine
COPY --from=build /app/prisma ./prisma
# the live queue page's script and style sheet, read from src/ at start
COPY --from=build /app/src/http/pages/voice-queue ./src/http/pages/voice-queue
# for `npm start` and `npm run cli -- …` in the container (it only checks dist/ in production)
COPY --from=build /app/scripts/ensure-built.js ./scripts/ensure-built.js
# the build, last: its stamp dist/.built stays newer than the sources copied above
COPY --from=build /app/dist ./dist
# the embedded database (PGlite) and its files, when DATABASE_URL is not set: a volume
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000
# /readyz: 200 once migrated and the database answers (curl is not in the slim image)
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself, as PID 1 (not npm): docker stop's SIGTERM goes straight to src/main.ts's handler,
# which drains and exits 0 within 10 s, before Docker's SIGKILL; it starts no child to reap, so
# no --init is needed. (npm start would forward the signal as well, with one more process.)
CMD ["node", "dist/src/main.js"]
