"""The agent: the turn loop and its prompts."""
