# One image for all three transports; the command picks the executable (docker-compose.yml).
# Node 24 runs the .ts sources directly (type stripping), so there is no compile step.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only, exactly as locked; none of them needs an install script.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
# The build context is an allow-list (.dockerignore): package.json, src, speed (the speed ring the executables switch on), packages, bin, openapi, proto, and fakes/ and embedded/ for --embedded.
COPY . .
USER node
# Public listener (HTTP_ADDR, and gRPC on the same port for orders-grpc) and admin listener (ADMIN_ADDR).
EXPOSE 8080 8081
ENTRYPOINT ["node"]
CMD ["bin/orders-grpc.ts"]
