// A fast dependency parser on UD English-EWT: the Stack-Transformer config's encoder and
// arc-standard actions, scored by a feed-forward layer over the encoded words on top of the stack
// and at the front of the buffer (s0, s1, s2, b0: Kiperwasser & Goldberg, 2016) instead of a
// Transformer decoder run per action. The hidden layer is precomputed per word (Chen & Manning,
// 2014), so an action costs a gather and two small products: parsing is bound by the encoder.
//
//   toolkit train jsonnet_configs/ud_ewt_state_mlp.jsonnet -s runs/ewt_state_mlp -o '{"trainer.max_minutes": 60}'
//
// Options: "model.decoder.stack" / "model.decoder.buffer" (how many words of each the layer reads),
// and ud_ewt_state_mlp_minilm.jsonnet reads through MiniLM too.
//
// Budgets (the 2-core CI machine's CPU, and a lent GPU where one was):
//   CPU: 24 min, 1 thread (2026-11-26): test LAS 75.4, beam 5.
//   GPU: not measured yet.
local base = import 'ud_ewt_stack_transformer.jsonnet';

base {
  model+: {
    decoder: { type: 'state_mlp', input_dim: 256, stack: 3, buffer: 1, dropout: 0.2 },
  },
}
