"""The agent's core: neutral message and event values, the error tree, the loop and its seams."""
