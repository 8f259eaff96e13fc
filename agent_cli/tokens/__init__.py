"""Token counting: exact for OpenAI models, learned for Claude, estimated as a last resort."""
