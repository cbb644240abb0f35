"""Data: readers (one file per format), token indexers, vocabulary, batching."""
