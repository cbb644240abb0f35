"""Reusable task pieces: embedders, encoders, CRF, dropout."""
