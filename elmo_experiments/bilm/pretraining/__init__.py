"""biLM pretraining: corpus preparation, LM batching, the joint LM objective, the run."""
