"""Hermes: a self-hosted personal AI agent that remembers every conversation and writes its own skills."""

__version__ = "0.1.0"
