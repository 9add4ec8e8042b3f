"""engram: an agent-memory system whose every write decision is a typed question with a probability per option."""
