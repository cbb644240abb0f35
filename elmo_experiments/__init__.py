"""elmo-experiments: contextual word representations (ELMo) and the task models that use them."""

__version__ = "0.1.0"
