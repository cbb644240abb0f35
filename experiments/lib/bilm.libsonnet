// Shared pieces of the biLM pretraining configs (Peters et al. 2018, section 3; docs/paper.md).
{
  // The released architectures, in options.json terms.
  original: { cell_dim: 4096, projection_dim: 512, n_highway: 2, char_embedding_dim: 16,
              filters: [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]] },
  small_released: { cell_dim: 1024, projection_dim: 128, n_highway: 1, char_embedding_dim: 16,
                    filters: [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512], [7, 1024]] },
  trainer(epochs, lr=0.2, patience=null):: {
    num_epochs: epochs,
    patience: patience,
    validation_metric: '-perplexity',
    grad_norm: 10.0,
    optimizer: { type: 'adagrad', lr: lr, initial_accumulator_value: 1.0 },
  },
}
