"""`hermes approvals list|revoke`: the standing "always" approvals and the user's rules file."""

from __future__ import annotations

import json

import click


@click.group()
def approvals() -> None:
    """Standing approvals for dangerous commands (HERMES_APPROVALS=ask|auto|deny).

    "always" answers are kept in $HERMES_HOME/approvals.json, one per rule
    (for example git-force-push); allow and deny globs of your own go in
    $HERMES_HOME/approvals.rules.
    """


@approvals.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the grants as a JSON array.")
def list_(as_json: bool) -> None:
    """Show the rules approved "always", and the state of your rules file."""
    from hermes.approvals.grants import AlwaysGrants
    from hermes.approvals.userrules import FILE_NAME, load_rules
    from hermes.config import Config

    config = Config.from_env()
    store = AlwaysGrants(config.home)
    grants = store.list()
    if as_json:
        click.echo(json.dumps([g.to_dict() for g in grants], ensure_ascii=False, indent=2))
        return
    click.echo(f"mode: HERMES_APPROVALS={config.approvals}")
    if not grants:
        click.echo("no rules are approved always")
    for grant in grants:
        click.echo(f"{grant.rule}  (since {grant.created_at}): {grant.reason}")
        if grant.example:
            click.echo(f"    first approved for: {grant.example}")
    problem = store.problem()
    if problem:
        click.echo(f"warning: {problem}", err=True)
    rules = load_rules(config.home)
    path = config.home / FILE_NAME
    if rules.allow or rules.deny:
        click.echo(f"{path}: {len(rules.allow)} allow, {len(rules.deny)} deny rule(s)")
    for line in rules.problems:
        click.echo(f"warning: {path} {line} (ignored)", err=True)


@approvals.command()
@click.argument("rule", required=False)
@click.option("--all", "everything", is_flag=True, help="Revoke every standing approval.")
def revoke(rule: str | None, everything: bool) -> None:
    """Revoke the "always" approval of RULE (as `hermes approvals list` names it)."""
    from hermes.approvals.grants import AlwaysGrants
    from hermes.config import Config
    from hermes.errors import InvalidInput

    if not rule and not everything:
        raise click.UsageError("give the RULE to revoke, or --all")
    store = AlwaysGrants(Config.from_env().home)
    removed = store.revoke(None if everything else rule)
    if not removed and not everything:
        known = ", ".join(g.rule for g in store.list()) or "none"
        raise InvalidInput(f"{rule!r} is not approved always (approved: {known})")
    click.echo(f"revoked: {', '.join(removed)}" if removed else "nothing to revoke")
