"""Model providers, looked up by name in a registry."""

from hermes.providers.base import Chunk, Provider, ProviderSettings
from hermes.providers.registry import PROVIDERS, create_provider, provider_class

__all__ = [
    "PROVIDERS",
    "Chunk",
    "Provider",
    "ProviderSettings",
    "create_provider",
    "provider_class",
]
