"""Configuration: typed values (``model``) and the loader (``loader``)."""
from kgkit.config.model import (
    CacheConfig,
    CanonConfig,
    Config,
    LLMConfig,
    ReviewConfig,
    SkillsConfig,
    StageLLM,
)

__all__ = [
    "CacheConfig",
    "CanonConfig",
    "Config",
    "LLMConfig",
    "ReviewConfig",
    "SkillsConfig",
    "StageLLM",
]
