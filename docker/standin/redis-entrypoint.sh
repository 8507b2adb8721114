#!/bin/sh
# As the official image: flags alone mean redis-server, and without a config file the server listens on
# every interface with protected mode off (the container network is the boundary).
set -eu
case "${1:-}" in -*) set -- redis-server "$@" ;; esac
if [ "${1:-}" = redis-server ]; then
  shift
  exec setpriv --reuid=redis --regid=redis --init-groups redis-server --bind '* -::*' --protected-mode no --dir /tmp "$@"
fi
exec "$@"
