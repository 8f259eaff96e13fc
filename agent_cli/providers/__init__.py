"""Model providers: one adapter per file, each the only importer of its SDK."""
