"""engram-bench: the benchmark harness around the engram memory system.

Data flows one way: data -> slices -> systems (through the gateway) -> result files -> statistics -> paper.
"""

__version__ = "0.1.0"
