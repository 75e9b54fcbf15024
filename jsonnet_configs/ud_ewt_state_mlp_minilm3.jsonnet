// The accurate fast parser: ud_ewt_state_mlp_hashed.jsonnet (spelling features, pseudo-projective)
// reading through the first 3 of MiniLM's 6 layers, frozen: the cut layers are never run, so the
// transformer costs about half, and the spelling features make up for what they knew.
//   toolkit train jsonnet_configs/ud_ewt_state_mlp_minilm3.jsonnet -s runs/ewt_minilm3 -o '{"trainer.max_minutes": 30}'
// "model.token_embedders.minilm.num_layers" sets how many layers it keeps (6: all of them).
//
// Budgets (the 2-core CI machine's CPU, and a lent GPU where one was):
//   CPU: 17 epochs, stopped by patience, in 21 min, the first (filling the cache) 2.9 min of them (1 thread, 2026-11-26):
//   test LAS 87.3, beam 5.
//   GPU: not measured yet.
local base = import 'ud_ewt_state_mlp_hashed.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: { token_embedders+: { minilm: minilm { num_layers: 3, warmup_steps: 1000 } } },
  trainer+: { learning_rate_scheduler+: { warmup_steps: 300 } },
}
