"""Models: stacks (which provider answers which role), the gateway every call goes through with its cache, budget,
token counting and virtual clock, and the provider clients."""
