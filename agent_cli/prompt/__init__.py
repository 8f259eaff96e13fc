"""What the model is told before the conversation: the system prompt and the project's instructions."""
