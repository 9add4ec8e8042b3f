"""Analysis: scoring, the LLM judge and re-judging, statistics, metrics and the paired comparisons."""
