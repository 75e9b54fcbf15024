// Stack-Transformer AMR parser on The Little Prince (AMR 3.0; 1,274 train / 145 dev / 143 test graphs,
// split by id, see ../shared/data/amr-little-prince/SOURCE.md), after "Transition-based Parsing with
// Stack-Transformers" (Astudillo et al., 2020): the AMR actions of transition_systems/amr (SHIFT, REDUCE,
// MERGE, PRED, the copies COPY_LEMMA[:sense], COPY_SENSE01, COPY_WORD, COPY_STEM[:sense], COPY_FRAME, ENTITY,
// DEPENDENT, LA, RA, SWAP, CLOSE) decoded by a Transformer
// whose cross-attention has one head on the stack and one on the buffer. The oracle rebuilds every
// training graph (toolkit oracle: 1,274/1,274 exact round trips); PRED labels are restricted to those seen
// with the span's lemma in training, copies to the senses training copied (grammar.fit records both, as
// grammar.pred_labels and grammar.copy_labels, in the run's config).
//
// Sized for a 2-core CPU, no pretrained embeddings: 3+3 layers of width 256, 5.6M parameters (about 39 actions
// per graph, 49k training actions per epoch). A parser that has not learned to CLOSE is wrapped up by the
// grammar's action budget (2 actions per token and 4 per node made, plus the SWAPs the stack's depth may need:
// past it only moves towards CLOSE are allowed), so early validation stays fast: about 30 s per epoch on one
// CPU thread. The searches take no max_steps: each input's limit is what the grammar says a parse of it can
// take (grammar.max_steps), so longer sentences than The Little Prince's are never cut by a limit set for it;
// an output that was wrapped up or cut short says so in a '# ::warning' line. A time budget for CPU runs (every row
// of a comparison gets the same one):
//   toolkit train jsonnet_configs/amr_stack_transformer.jsonnet -s runs/amr_stack_buffer -o '{"trainer.max_minutes": 60}'
// Ablation, same budget: the plain Transformer over the same actions (no stack/buffer heads):
//     -o '{"model.decoder.stack_heads": [], "model.decoder.buffer_heads": []}'
// Oracle Smatch of a split (no training): toolkit oracle jsonnet_configs/amr_stack_transformer.jsonnet DATA
// Predict: toolkit predict runs/amr_stack_buffer/model.tar.gz sentences.txt --predictor amr
local data_root = std.extVar('DATA_ROOT');
local dir = data_root + '/amr-little-prince/';
local dim = 256;
local layers = 3;
local heads = 4;
local dropout = 0.3;
local common = { input_dim: dim, layers: { num_layers: layers, num_heads: heads, ff_dim: 4 * dim, dropout: dropout } };

{
  // # ::snt of the AMR Bank is tokenised: split on whitespace; lemmas from spaCy (en_core_web_sm) if installed, else simplemma's.
  dataset_reader: { type: 'penman', tokenizer: 'whitespace' },
  train_data_path: dir + 'amr-bank-struct-v3.0-train.txt',
  validation_data_path: dir + 'amr-bank-struct-v3.0-dev.txt',
  test_data_path: dir + 'amr-bank-struct-v3.0-test.txt',
  // The aligner (which the oracle uses) reads USC/ISI's AMR dictionaries: verbalizations, derivations, role words.
  // Named entities and dates: a mention (spaCy's NER, else rules) the grammar can type is made whole by NAME or DATE, and a
  // parse must take it (take_mentions; the oracle is free): with it, the MiniLM parser's Smatch on the 20 hand-annotated
  // sentences of tests/fixtures/amr_entities_heldout.txt went from 37.3 to 72.6, and on The Little Prince test from 55.1 to 56.0.
  // propbank_senses: a copy with a sense makes only a frame of PropBank's AMR list (fit records them): the book-only MiniLM
  // parser made 183 of its 469 sensed concepts on Bio AMR's test part outside the list (treatment-01, mutation-01), 5 with it.
  grammar: {
    type: 'amr',
    restrict_pred_labels: true,
    smatch_seed: 13,
    dictionaries: data_root + '/amr-dictionaries',
    take_mentions: true,
    propbank_senses: true,
  },
  vocabulary: { min_count: { tokens: 2 } },
  model: {
    type: 'encoder_decoder',
    encoder: common { type: 'transformer' },
    decoder: common {
      type: 'stack_transformer',
      stack_heads: [0],
      buffer_heads: [1],
      masked_layers: null,  // all layers
      position_embeddings: true,
      max_position: 32,
      positional_encoding: { type: 'sinusoidal', max_length: 4096 },  // action sequences longer than 1,024 (1,231 in news text)
    },
    tie_output_embeddings: true,
    label_smoothing: 0.1,
    source_token_dropout: 0.1,
    search: { type: 'beam', beam_size: 5 },  // steps per input from the grammar (the longest training graph takes 347 actions)
  },
  metrics: [{ type: 'smatch', seed: 13 }],
  trainer: {
    optimizer: { type: 'adam', lr: 5e-4, betas: [0.9, 0.98], eps: 1e-9 },
    learning_rate_scheduler: { type: 'inverse_sqrt', warmup_steps: 400 },
    num_epochs: 60,
    patience: 8,
    validation_metric: '+smatch',
    validation_search: { type: 'greedy' },
    num_checkpoints_to_average: 3,
    grad_norm: 1.0,
    max_tokens: 3072,  // source words + actions per batch
    decode_max_tokens: 8192,
    device: 'auto',
    mixed_precision: 'auto',
  },
  random_seed: 13,
}
