# Stand-in for redis:7 when the public registry is unreachable: Debian bookworm's Redis 7.0.
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server redis-tools \
 && rm -rf /var/lib/apt/lists/*
COPY redis-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
LABEL org.orders.standin=redis
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
