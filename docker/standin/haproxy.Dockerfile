# Stand-in for haproxy:2.6 when the public registry is unreachable: Debian bookworm's haproxy 2.6, started
# as the official image starts it (`haproxy -f /usr/local/etc/haproxy/haproxy.cfg`, master-worker, in the
# foreground; SIGUSR1 stops it softly). docker-compose.cluster.yml mounts deploy/haproxy/haproxy.cfg there.
ARG BASE
FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends haproxy \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /usr/local/etc/haproxy
LABEL org.orders.standin=haproxy
STOPSIGNAL SIGUSR1
EXPOSE 8080
ENTRYPOINT ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
