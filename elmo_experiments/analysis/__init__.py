"""Looking at runs: the learned ELMo mixes by placement (``mixes``) and ``elmo-exp plot``
(``plots``, which needs matplotlib: ``pip install -e .[viz]``)."""
