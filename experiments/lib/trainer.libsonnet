// Trainer defaults shared by the task configs.
{
  adam(lr=0.001):: { type: 'adam', lr: lr },
  trainer(metric, epochs=10, patience=3, lr=0.001, grad_norm=5.0):: {
    num_epochs: epochs,
    patience: patience,
    validation_metric: metric,
    grad_norm: grad_norm,
    optimizer: $.adam(lr),
  },
}
