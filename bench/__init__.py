"""engram-bench: the benchmark harness around the engram memory system.

Data flows one way: data -> slices -> systems (through the gateway) -> result files -> statistics -> paper.
"""

__version__ = "0.1.0"

from bench.run.terminal import apply_quiet

# A worker process started by a `--quiet` command inherits the quiet environment: its warnings stay silent too.
apply_quiet()
