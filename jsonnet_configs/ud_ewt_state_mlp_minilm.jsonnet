// ud_ewt_state_mlp.jsonnet (the fast parser: a feed-forward layer over s0, s1, s2, b0) reading
// through all-MiniLM-L6-v2 beside its own word embedding, as ud_ewt_stack_transformer_minilm.jsonnet
// does for the Stack-Transformer; see minilm.libsonnet for what to install.
//   toolkit train jsonnet_configs/ud_ewt_state_mlp_minilm.jsonnet -s runs/ewt_state_mlp_minilm -o '{"trainer.max_minutes": 60}'
local base = import 'ud_ewt_state_mlp.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: { token_embedders: { minilm: minilm { warmup_steps: 1000 } } },
  trainer+: { learning_rate_scheduler+: { warmup_steps: 300 } },
}
