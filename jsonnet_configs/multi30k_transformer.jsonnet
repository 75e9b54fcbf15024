// German-to-English translation on Multi30k (task 1: 29,000 train / 1,014 val / 1,000
// test_2016_flickr sentences) with the grammar-driven encoder-decoder and the plain `sequence`
// grammar. Both sides are tokenised with sacreBLEU's 13a tokenizer and lower-cased, so the test
// score is case-insensitive sacreBLEU (13a) against the raw references. Sized for a 2-core CPU
// (3+3 layers, d 256, 4 heads); set a budget with -o '{"trainer.max_minutes": 120}'.
// multi30k_hypernode.jsonnet changes only the encoder.
local data_root = std.extVar('DATA_ROOT');
local multi30k = data_root + '/multi30k/';
local dim = 256;
local transformer = { type: 'transformer', input_dim: dim, layers: { num_layers: 3, num_heads: 4, ff_dim: 4 * dim, dropout: 0.2 } };

{
  dataset_reader: { type: 'parallel_text', source_language: 'de', target_language: 'en', tokenize: '13a', lowercase: true },
  train_data_path: multi30k + 'train',
  validation_data_path: multi30k + 'val',
  test_data_path: multi30k + 'test_2016_flickr',
  grammar: { type: 'sequence', max_length: 80 },
  vocabulary: { min_count: { tokens: 2, symbols: 2 } },
  model: {
    type: 'encoder_decoder',
    encoder: transformer,
    decoder: transformer,
    tie_output_embeddings: true,
    label_smoothing: 0.1,
    search: { type: 'beam', beam_size: 4 },
  },
  metrics: [{ type: 'bleu', tokenize: '13a', lowercase: true }],
  trainer: {
    optimizer: { type: 'adam', lr: 1e-3, betas: [0.9, 0.98], eps: 1e-9 },
    learning_rate_scheduler: { type: 'inverse_sqrt', warmup_steps: 1000 },
    num_epochs: 40,
    patience: 5,
    validation_metric: '+bleu',
    validation_search: { type: 'greedy' },
    num_checkpoints_to_average: 3,
    grad_norm: 1.0,
    max_tokens: 4096,
    device: 'auto',
    mixed_precision: 'auto',
  },
  random_seed: 13,
}
