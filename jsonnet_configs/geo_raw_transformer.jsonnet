// The main job: a semantic parser that answers raw questions about US geography from Geobase.
// A Transformer reads GEO's raw questions (the same 600/280 split as geo_transformer.jsonnet) and
// writes Prolog queries that SWI-Prolog runs over Geobase (needs `swipl`: apt-get install swi-prolog-nox).
//
// It reads the question through all-MiniLM-L6-v2 (frozen, beside its own word embedding; see minilm.libsonnet), a
// sentence encoder trained on a billion sentence pairs, so that wordings no training question uses land near those
// it does; and it trains on more than GEO's 600 questions: Jia & Liang's recombination of them and questions written
// from Geobase's schema (the dataset reader below). Needs `pip install -e ".[geo]"` (transformers and the model).
//
// Entity mentions are found with Geobase's lexicon and replaced by placeholders (e0, e1, ...) in the
// question, after the types they can have (`how many people live in city e0 ?`), and in the query,
// where the id constructor stays (`_cityid ( e0 , _ )`): the parser's choice of constructor says
// which "mississippi" it means, and its results name the entities again (grammar 'anonymized').
// The query is decoded as a tree (Prolog terms, left-child right-sibling, depth first, with tree
// positional encodings), so every prediction is a well-formed term. Scored by the answer
// (denotation_accuracy) and by the query (exact_match).
//   plain token sequence instead of trees: -o '{"grammar.grammar": {"type": "sequence", "max_length": 150}, "model.decoder.positional_encoding": null}'
//   without execution-guided decoding: -o '{"model.search.execution_guided": null}' (or evaluate --beam-size 5)
//   without answer kinds (any answer fits any question): -o '{"model.search.answer_kinds": null}'
//   without abstaining (answer with the best reading even where none passes): -o '{"model.search.abstain": false}'
//   answering also from readings the model is unsure of (under half the beam's probability): -o '{"model.search.min_confidence": 0}'
//   without MiniLM (words only; no transformers needed): -o '{"model.token_embedders": null}'
//   without the data beyond GEO's questions: -o jsonnet_configs/overrides/geo_raw_questions_only.jsonnet
local minilm = import 'minilm.libsonnet';
local data_root = std.extVar('DATA_ROOT');
local raw = data_root + '/geo-raw';
local dim = 256;
local layers = 3;
local heads = 4;
local dropout = 0.3;
local anonymizer = {
  type: 'geo_prolog',
  // prefixed_names: "lake erie" is the low point and the lake erie, "mount rainier" the high point and the mountain rainier
  finder: { type: 'lexicon', lexicon: { path: raw + '/geo_entities.json' }, prefixed_names: true },
  unknown: 'keep',
  type_words: true,
};
local executor = { type: 'geoquery_prolog', database: raw };

{
  // Training data beyond the 600 questions (docs/recombination.md), as new examples per training question (ratio):
  // Jia & Liang's recombination of the raw data (entities 0.1, whole_phrases 0.25, concat 0.1: 270 more) and
  // questions written from Geobase's schema (templates 0.5: 300 more), 1,170 in all. A draw is kept if the grammar
  // derives it and Geobase answers it.
  //   without recombination: -o '{"dataset_reader.strategies": {"entities": {"ratio": 0}, "whole_phrases": {"ratio": 0}, "concat": {"ratio": 0}}}'
  //   without the templates: -o '{"dataset_reader.strategies.templates.ratio": 0}'
  dataset_reader: {
    type: 'recombination',
    base_reader: { type: 'tsv', anonymizer: anonymizer },
    strategies: {
      entities: { type: 'abs_entities', ratio: 0.1 },
      whole_phrases: { type: 'abs_whole_phrases', ratio: 0.25 },
      concat: { type: 'concat', k: 2, ratio: 0.1, max_target_tokens: 150 },
      templates: { type: 'geo_templates', ratio: 0.5 },
    },
    check: { executor: executor { max_inferences: 5000000 }, grammar: $.grammar },  // slow draws are dropped, not waited for
    seed: 13,
  },
  validation_dataset_reader: { type: 'tsv', anonymizer: anonymizer },  // validation, test and questions asked: never augmented
  train_data_path: raw + '/geo_prolog_train.tsv',
  test_data_path: raw + '/geo_prolog_test.tsv',  // test_fixed writes its corrected queries in Prolog's own syntax, not the data's tokens
  // all_constructors: the vocabulary holds every id constructor (_lakeid, _mountainid: in no training query) and e0..e5.
  // constrain_constructors (off: see docs/guides/semantic.md, "Every kind of entity"): an id constructor only where a
  // mention of the question fits it, and under it only such placeholders, so every query decoded restores.
  grammar: {
    type: 'anonymized',
    anonymizer: anonymizer,
    grammar: { type: 'lcrs_dfs', max_nodes: 150, format: 'prolog' },
    all_constructors: true,
    constrain_constructors: false,
  },
  vocabulary: { min_count: { tokens: 1 } },
  model: {
    type: 'encoder_decoder',
    token_embedders: { minilm: minilm { warmup_steps: 200 } },
    encoder: { type: 'transformer', input_dim: dim, layers: { num_layers: layers, num_heads: heads, ff_dim: 4 * dim, dropout: dropout } },
    decoder: {
      type: 'transformer',
      input_dim: dim,
      layers: { num_layers: layers, num_heads: heads, ff_dim: 4 * dim, dropout: dropout },
      positional_encoding: { type: 'tree', degree: 2, max_depth: 32, parameterized: true },
    },
    tie_output_embeddings: true,
    label_smoothing: 0.1,
    // Execution-guided decoding: of the beam's finished queries, the best one that answers, with an answer of
    // the kind the question asks for ("how many": a number) and about entities the question names; where
    // none does, the predictor says it cannot answer rather than guess (the best one is still scored).
    search: { type: 'beam', beam_size: 5, execution_guided: executor, answer_kinds: { type: 'geo_english' }, abstain: true, min_confidence: 0.5 },
  },
  metrics: [{ type: 'exact_match' }, { type: 'denotation_accuracy', executor: executor }],
  trainer: {
    optimizer: { type: 'adam', lr: 1e-3, betas: [0.9, 0.98], eps: 1e-9 },
    learning_rate_scheduler: { type: 'inverse_sqrt', warmup_steps: 200 },
    num_epochs: 60,  // over 1,170 examples: about as many steps as 120 epochs of the 600 questions
    grad_norm: 1.0,
    max_tokens: 2048,
    num_checkpoints_to_average: 5,
    device: 'auto',
    mixed_precision: 'auto',
  },
  random_seed: 13,
}
