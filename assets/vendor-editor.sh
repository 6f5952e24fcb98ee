#!/usr/bin/env bash
# Build the document editor bundle (static/vendor/collab-editor.js) from assets/editor/src with
# the pinned esbuild. Called by vendor.sh (after `npm ci`) with the output folder as $1.
set -euo pipefail
cd "$(dirname "$0")"
node editor/build.mjs "${1:-../static/vendor}"
