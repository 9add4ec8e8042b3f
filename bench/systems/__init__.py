"""Memory systems under test, found by name through a registry (see `bench.systems.base`)."""

from bench.systems.base import (
    SYSTEMS,
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
    "SYSTEMS",
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
