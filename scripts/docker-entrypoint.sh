#!/bin/sh
# The image's entry point: the first argument names the process (api, worker, setup); anything else runs as given.
set -e
cmd="${1:-api}"
[ "$#" -gt 0 ] && shift
case "$cmd" in
  api) exec node --import tsx /app/api/main.ts "$@" ;;
  # A worker that polls no media queue keeps V8's young generation small (scripts/node-flags.mjs says why).
  worker)
    case ",$(echo "${WORKER_QUEUES:-all}" | tr -d ' ' | tr 'A-Z' 'a-z')," in
      *,media,* | ,all, | ,both, | ,,) exec node --import tsx /app/worker/main.ts "$@" ;;
      *) exec node --max-semi-space-size=4 --import tsx /app/worker/main.ts "$@" ;;
    esac
    ;;
  setup) exec node /app/scripts/setup.mjs "$@" ;;
  *) exec "$cmd" "$@" ;;
esac
