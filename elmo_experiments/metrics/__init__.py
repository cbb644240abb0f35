"""Evaluation metrics (conlleval-exact span F1)."""
