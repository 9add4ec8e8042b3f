"""Every exception engram raises, in one tree, so a caller can catch all of them with one name or pick one branch.

    EngramError                 the root: anything engram itself raises
    ├── DecisionError           a whole decision request failed (network, protocol); the write path keeps the fact
    │                           tentative and touches nothing else, the read path falls back to cosine
    ├── LLMError                a chat-model call failed; an escalation keeps the fact tentative and closes nothing
    ├── MalformedAnswer         one backend answer broke the wire contract; only its own question degrades
    ├── MissingInput            a request lacks something a question needs (a ref, the query, the new fact's text),
    │                           or a fact id names nothing stored
    └── InvalidInput            the caller handed engram a value it cannot use (a reused message id, a store made
                                for another embedding size, an unknown question revision, a bad setting)

Backends written outside engram raise these too: a client whose request failed raises a subclass of
`DecisionError` (or `LLMError`) so engram degrades instead of crashing.
"""

from __future__ import annotations


class EngramError(Exception):
    """The root of every exception engram raises."""


class DecisionError(EngramError):
    """A whole decision request failed; the write path degrades the fact, never crashes."""


class LLMError(EngramError):
    """A chat-model call failed; escalation keeps the fact tentative and closes nothing."""


class MalformedAnswer(EngramError, ValueError):
    """One answer broke the wire contract; the message says which field and what was found."""


class MissingInput(EngramError, LookupError):
    """Something a question or a lookup needs is absent; the message names it."""


class InvalidInput(EngramError, ValueError):
    """A value handed to engram that it cannot use; the message names the value, what was expected and found."""
