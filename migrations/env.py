"""Alembic environment for Hermes.

Hermes runs migrations itself (``hermes.store.migrate``) and hands this file an
open connection in ``config.attributes["connection"]``; run by hand (for
``alembic revision --autogenerate``) it connects to ``HERMES_DATABASE_URL``.
"""

from __future__ import annotations

from alembic import context

from hermes.store.migrate import include_object
from hermes.store.models import Base


def run_migrations(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        include_object=include_object,
        render_as_batch=True,  # SQLite cannot ALTER most things in place
        transaction_per_migration=False,
    )
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        run_migrations(connection)
        return
    from hermes.config import Config
    from hermes.store.engine import make_engine, write_transaction

    url = context.config.get_main_option("sqlalchemy.url") or Config.from_env().database_url
    engine = make_engine(url)
    try:
        with write_transaction(engine) as connection:
            run_migrations(connection)
    finally:
        engine.dispose()


main()
