#!/usr/bin/env bash
# Copy the pinned npm packages into static/vendor. Run through `make assets`; the output is
# committed so that running Collab needs no Node.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
out=../static/vendor
mkdir -p "$out"
cp node_modules/htmx.org/dist/htmx.min.js "$out/htmx.min.js"
cp node_modules/htmx-ext-ws/dist/ws.min.js "$out/htmx-ext-ws.min.js"
for extra in vendor-*.sh; do
  [ -e "$extra" ] && bash "$extra" "$out"
done
echo "vendored into static/vendor:"; ls -l "$out"
