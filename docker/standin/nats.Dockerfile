# Stand-in for nats:2 (and nats:2-alpine) when the public registry is unreachable: Debian bookworm's
# nats-server 2.9 (JetStream included), plus wget for docker-compose.yml's health check.
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nats-server wget \
 && rm -rf /var/lib/apt/lists/*
COPY nats-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
LABEL org.orders.standin=nats
EXPOSE 4222 8222
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["nats-server"]
