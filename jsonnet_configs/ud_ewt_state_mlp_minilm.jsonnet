// ud_ewt_state_mlp.jsonnet (the fast parser: a feed-forward layer over s0, s1, s2, b0) reading
// through all-MiniLM-L6-v2 beside its own word embedding, as ud_ewt_stack_transformer_minilm.jsonnet
// does for the Stack-Transformer; see minilm.libsonnet for what to install.
//   toolkit train jsonnet_configs/ud_ewt_state_mlp_minilm.jsonnet -s runs/ewt_state_mlp_minilm -o '{"trainer.max_minutes": 60}'
//
// Budgets (the 2-core CI machine's CPU, and a lent GPU where one was):
//   CPU: 15 epochs in 24 min, the first (filling MiniLM's cache) 5.5 min of them (1 thread, 2026-11-26): test LAS 87.1, beam 5.
//   GPU: not measured yet.
local base = import 'ud_ewt_state_mlp.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: { token_embedders: { minilm: minilm { warmup_steps: 1000 } } },
  trainer+: { learning_rate_scheduler+: { warmup_steps: 300 } },
}
