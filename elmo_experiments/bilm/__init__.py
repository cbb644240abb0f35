"""The ELMo biLM: character ids, char CNN + highway, LSTMs with projection, weight files,
scalar mix, the ``elmo`` token embedder and its activation cache."""
