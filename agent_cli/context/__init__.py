"""The context engine: keeps every request under the model's window."""
