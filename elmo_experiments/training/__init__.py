"""Training: the loop, checkpoints and recovery, optimizers, schedulers, callbacks."""
