"""The command line: `hermes` and its subcommands."""
