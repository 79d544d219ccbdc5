"""The production entry point: ``gunicorn wsgi:app`` (see gunicorn.conf.py and the Procfile).

Fails closed: a missing FLASK_SECRET_KEY or HERMES_WEB_PASSWORD (or any other
configuration problem) prints one line saying what to set, and the process
exits with status 4, which gunicorn reads as "the app failed to load" and
stops instead of restarting workers in a loop.
"""

import sys

from hermes.errors import HermesError
from web import create_app

APP_LOAD_ERROR = 4  # gunicorn's exit status for a worker whose app cannot load

try:
    app = create_app()
except HermesError as exc:
    print(f"hermes web: error: {exc.message}", file=sys.stderr, flush=True)
    sys.exit(APP_LOAD_ERROR)
