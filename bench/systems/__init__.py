"""Memory systems under test, found by name through a registry (see `bench.systems.base`)."""

from bench.systems.base import (
    AuditFact,
    RetrievedLines,
    Setting,
    System,
    SystemContext,
    WriteUsage,
    build_system,
    get_system,
    register_system,
    system_names,
)

__all__ = [
    "AuditFact",
    "RetrievedLines",
    "Setting",
    "System",
    "SystemContext",
    "WriteUsage",
    "build_system",
    "get_system",
    "register_system",
    "system_names",
]
