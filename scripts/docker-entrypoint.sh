#!/bin/sh
# The image's entry point: the first argument names the process (api, worker, setup); anything else runs as given.
set -e
cmd="${1:-api}"
[ "$#" -gt 0 ] && shift
case "$cmd" in
  api) exec node --import tsx /app/api/main.ts "$@" ;;
  worker) exec node --import tsx /app/worker/main.ts "$@" ;;
  setup) exec node /app/scripts/setup.mjs "$@" ;;
  *) exec "$cmd" "$@" ;;
esac
