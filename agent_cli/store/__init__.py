"""What agent-cli keeps on disk: session logs, the archive of what left the context, crash logs."""
