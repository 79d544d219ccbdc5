"""Model providers, looked up by name in a registry."""

from hermes.providers.base import Chunk, Provider, ProviderSettings
from hermes.providers.registry import create_provider, provider_class, provider_names

__all__ = [
    "Chunk",
    "Provider",
    "ProviderSettings",
    "create_provider",
    "provider_class",
    "provider_names",
]
