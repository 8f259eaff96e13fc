"""Settings: the typed values, the TOML schema, and loading them (file < env < flags)."""
