#!/bin/sh
# As the official images: flags alone are nats-server's (nats:2 runs `nats-server -js` from `-js`).
set -eu
case "${1:-}" in -*) set -- nats-server "$@" ;; esac
exec "$@"
