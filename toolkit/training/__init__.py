"""Training: the loop, optimizers, schedules, checkpoints and devices."""
