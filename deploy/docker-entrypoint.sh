#!/bin/sh
# Container entrypoint: check the configuration, then run the command (gunicorn by default).
#
# `python -m hermes.deploy` prints one line per missing setting (FLASK_SECRET_KEY,
# HERMES_WEB_PASSWORD, a writable HERMES_HOME) and exits 78, so a misconfigured
# container stops with the fix in its log instead of restarting behind a healthcheck.
# `hermes ...` commands (db backup, db restore, doctor) skip the web checks.
set -eu

case "${1:-}" in
    hermes|sh|bash)
        exec "$@"
        ;;
esac

mkdir -p "${HERMES_WORKSPACE:-${HERMES_HOME:-/data}/workspace}" 2>/dev/null || true
python -m hermes.deploy
exec "$@"
