// The README's quickstart: a dependency parser for UD English-EWT that trains, is scored on the
// test set and is archived in under 5 minutes on a quiet 2-core CPU. It is the fast parser with
// spelling features (ud_ewt_state_mlp_hashed.jsonnet: the `state_mlp` decoder over s0, s1, s2,
// b0, hashed form/prefix/suffix/shape embeddings, pseudo-projective arc-standard actions) with two
// encoder layers instead of three, a shorter warmup, and a 3-minute training budget
// (`trainer.max_minutes`, the `time_budget` callback: no epoch starts that would, at the pace of
// the last one, end past it). Indexing the data, the final checkpoint average and the test set's
// decoding (beam 5) come on top.
//
//   toolkit train jsonnet_configs/ud_ewt_quickstart.jsonnet -s runs/ewt_quickstart
//
// For a better parser from the same recipe, give it more time (-o '{"trainer.max_minutes": 24}';
// see the EWT frontier in docs/experiments/dependency.md).
//
// Budgets (the 2-core CI machine's CPU, and a lent GPU where one was):
//   CPU: its 3-minute training budget, 3.5 min in all with the test set (2 threads, 2026-11-26): test LAS 72.2, beam 5.
local base = import 'ud_ewt_state_mlp_hashed.jsonnet';

base {
  model+: { encoder+: { layers+: { num_layers: 2 } } },
  trainer+: {
    max_minutes: 3,
    learning_rate_scheduler+: { warmup_steps: 300 },
  },
}
