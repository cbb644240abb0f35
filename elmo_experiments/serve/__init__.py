"""Serving trained models: ``elmo-exp serve`` (``app.py``) over ``models.py``."""
