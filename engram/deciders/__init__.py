"""Decision backends behind one protocol (`engram.protocols.DecisionBackend`).

- `scripted`: answers written down by a test (unit tests of each gate).
- `rules`: an offline, deterministic stand-in decision model (lexical rules + MiniLM cosine). A stand-in, labelled
  as such in its name and model.
- `llm`: the LLM-decider arm (mem0's update prompt on an LLM), also used for escalation.
The `jev` backend lives in `bench.clients` because every Jev call goes through the gateway.
"""
