// The fast dependency parser (ud_ewt_state_mlp.jsonnet) reading each word's spelling as well:
// hashed embeddings of its lower-cased form, first letter, last three letters and shape
// (spaCy's MultiHashEmbed; token embedder 'hashed_features'), beside the word embedding, so an
// unknown word still has its suffix and shape. Non-projective trees are parsed pseudo-projectively
// (Nivre & Nilsson, 2005): the parser can predict crossing arcs.
//
//   toolkit train jsonnet_configs/ud_ewt_state_mlp_hashed.jsonnet -s runs/ewt_state_mlp_hashed -o '{"trainer.max_minutes": 60}'
//
// Budgets (the 2-core CI machine's CPU, and a lent GPU where one was):
//   CPU: with 2 encoder layers, 22 epochs, stopped by patience, in 17.7 min (1 thread, 2026-11-26): test LAS 79.4, beam 5.
//   GPU: one H200, these defaults: 26 epochs in 3 min (2026-11-27): test LAS 80.1.
local base = import 'ud_ewt_state_mlp.jsonnet';

base {
  grammar+: { non_projective: 'pseudo_projective' },
  model+: { token_embedders: { spelling: { type: 'hashed_features', width: 64, dropout: 0.1 } } },
}
