// The fast hashed parser (ud_ewt_state_mlp_hashed.jsonnet) trained as Kiperwasser & Goldberg (2016)
// and spaCy train theirs: arc-hybrid transitions, whose dynamic oracle knows the best action from
// any configuration, and training with exploration (Goldberg & Nivre, 2012). After ten epochs on
// the static oracle's path, each batch is parsed by the model itself, following its own
// prediction at 90% of the steps, and every step is taught the best action from where the model
// stands (toolkit.decoding.exploration). Exploring from the second epoch instead did worse in 40
// minutes: a weak parser's paths teach little and slow it down.
//
//   toolkit train jsonnet_configs/ud_ewt_state_mlp_explore.jsonnet -s runs/ewt_explore -o '{"trainer.max_minutes": 40}'
//
// Budgets (the 2-core CI machine's CPU, and a lent GPU where one was):
//   CPU: 27 epochs in 40 min, 1 thread, beside other runs (2026-11-27): test LAS 80.5 greedy, 80.8 beam 5
//   (docs/experiments/dependency.md#dynamic-oracle-and-exploration).
//   GPU: not measured yet.
local base = import 'ud_ewt_state_mlp_hashed.jsonnet';

base {
  grammar+: { type: 'arc_hybrid' },
  model+: { exploration: { probability: 0.9, after_epochs: 10 } },
}
