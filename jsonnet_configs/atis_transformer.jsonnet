// Transformer semantic parser on ATIS (Dong & Lapata 2016 split: 4,433 train / 491 dev / 448 test).
// Sized for a 2-core CPU; the PhraseTransformer paper's GPU size is reachable with
//   -o jsonnet_configs/overrides/paper_size.jsonnet
// Checkpoints are chosen by greedy logic match on dev; the final weights average the best ones,
// and the test set is decoded once, with beam search, after training.
local data_root = std.extVar('DATA_ROOT');
local dim = 256;
local layers = 3;
local heads = 4;
local dropout = 0.2;
local transformer = { type: 'transformer', input_dim: dim, layers: { num_layers: layers, num_heads: heads, ff_dim: 4 * dim, dropout: dropout } };

{
  dataset_reader: { type: 'tsv' },
  train_data_path: data_root + '/atis/train.tsv',
  validation_data_path: data_root + '/atis/dev.tsv',
  test_data_path: data_root + '/atis/test.tsv',
  grammar: { type: 'bracketed', max_length: 150 },
  model: {
    type: 'encoder_decoder',
    encoder: transformer,
    decoder: transformer,
    tie_output_embeddings: true,
    label_smoothing: 0.1,
    search: { type: 'beam', beam_size: 5 },
  },
  metrics: [{ type: 'exact_match' }, { type: 'logic_match' }],
  trainer: {
    optimizer: { type: 'adam', lr: 1e-3, betas: [0.9, 0.98], eps: 1e-9 },
    learning_rate_scheduler: { type: 'inverse_sqrt', warmup_steps: 400 },
    num_epochs: 50,
    patience: 10,
    validation_metric: '+logic_match',
    validation_search: { type: 'greedy' },
    num_checkpoints_to_average: 3,
    grad_norm: 1.0,
    max_tokens: 4096,
    device: 'auto',
    mixed_precision: 'auto',  // bf16 on a GPU; full precision on the CPU, where these results were measured
  },
  random_seed: 13,
}
