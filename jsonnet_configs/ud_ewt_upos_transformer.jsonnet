// UPOS tagging on UD English EWT (12,544 train / 2,001 dev / 2,077 test sentences) with a
// Transformer encoder and a linear layer over the 17 tags. Sized for a 2-core CPU (d 256,
// 3 layers, 4 heads). The hypernode variants (ud_ewt_upos_hypernode*.jsonnet) change only the
// encoder, so every variant sees the same batches; compare them on one time budget with
//   -o '{"trainer.max_minutes": 30}'
// Checkpoints are chosen by dev UPOS accuracy; the test set is scored once after training.
local data_root = std.extVar('DATA_ROOT');
local ewt = data_root + '/ud-english-ewt/en_ewt-ud-';
local dim = 256;

{
  dataset_reader: { type: 'conllu' },
  train_data_path: ewt + 'train.conllu',
  validation_data_path: ewt + 'dev.conllu',
  test_data_path: ewt + 'test.conllu',
  grammar: { type: 'tags', field: 'upos' },
  model: {
    type: 'tagger',
    encoder: { type: 'transformer', input_dim: dim, layers: { num_layers: 3, num_heads: 4, ff_dim: 4 * dim, dropout: 0.2 } },
    dropout: 0.2,
    source_token_dropout: 0.1,  // learns the unknown-word embedding: EWT test has many unseen words
  },
  metrics: [{ type: 'tag_accuracy' }],
  trainer: {
    optimizer: { type: 'adam', lr: 1e-3, betas: [0.9, 0.98], eps: 1e-9 },
    learning_rate_scheduler: { type: 'inverse_sqrt', warmup_steps: 400 },
    num_epochs: 40,
    patience: 5,
    validation_metric: '+tag_accuracy',
    num_checkpoints_to_average: 3,
    grad_norm: 1.0,
    max_tokens: 4096,  // words per batch, padding included
    device: 'auto',
    mixed_precision: 'auto',
  },
  random_seed: 13,
}
