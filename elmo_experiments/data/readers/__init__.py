"""Dataset readers, one file per data format."""
