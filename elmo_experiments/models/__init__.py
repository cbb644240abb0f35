"""Task models, one file per task head."""
