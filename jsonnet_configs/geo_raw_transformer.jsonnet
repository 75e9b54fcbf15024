// Transformer semantic parser on raw GEO questions with real entity names (the same 600/280 split
// as geo_transformer.jsonnet), predicting Prolog queries that SWI-Prolog runs over Geobase.
//
// Entity mentions are found with Geobase's lexicon and replaced by placeholders (e0, e1, ...) in the
// question and in the query, where the id constructor stays (`_stateid ( e0 )`): the parser's choice
// of constructor says which "mississippi" it means, and its results name the entities again
// (grammar 'anonymized'). Scored by the answer (denotation_accuracy, needs `swipl`) and by the query.
local data_root = std.extVar('DATA_ROOT');
local raw = data_root + '/geo-raw';
local dim = 256;
local layers = 3;
local heads = 4;
local dropout = 0.3;
local anonymizer = {
  type: 'geo_prolog',
  finder: { type: 'lexicon', lexicon: { path: raw + '/geo_entities.json' } },
  unknown: 'keep',
};

{
  dataset_reader: { type: 'tsv', anonymizer: anonymizer },
  train_data_path: raw + '/geo_prolog_train.tsv',
  test_data_path: raw + '/geo_prolog_test.tsv',  // test_fixed writes its corrected queries in Prolog's own syntax, not the data's tokens
  grammar: { type: 'anonymized', anonymizer: anonymizer, grammar: { type: 'sequence', max_length: 150 } },
  vocabulary: { min_count: { tokens: 1 } },
  model: {
    type: 'encoder_decoder',
    encoder: { type: 'transformer', input_dim: dim, layers: { num_layers: layers, num_heads: heads, ff_dim: 4 * dim, dropout: dropout } },
    decoder: { type: 'transformer', input_dim: dim, layers: { num_layers: layers, num_heads: heads, ff_dim: 4 * dim, dropout: dropout } },
    tie_output_embeddings: true,
    label_smoothing: 0.1,
    search: { type: 'beam', beam_size: 5 },
  },
  metrics: [{ type: 'exact_match' }, { type: 'denotation_accuracy', executor: { type: 'geoquery_prolog', database: raw } }],
  trainer: {
    optimizer: { type: 'adam', lr: 1e-3, betas: [0.9, 0.98], eps: 1e-9 },
    learning_rate_scheduler: { type: 'inverse_sqrt', warmup_steps: 200 },
    num_epochs: 120,
    grad_norm: 1.0,
    max_tokens: 2048,
    num_checkpoints_to_average: 5,
    device: 'auto',
    mixed_precision: 'auto',
  },
  random_seed: 13,
}
