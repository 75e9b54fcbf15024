// A Stack-Transformer dependency parser on UD English-EWT with the plugin's Covington transitions
// (SHIFT, NO-ARC, LEFT-ARC, RIGHT-ARC): non-projective trees are parsed as they are, with no
// projectivizing and no SWAP. Everything else is the toolkit's ud_ewt_stack_transformer.jsonnet;
// the stack head reads Covington's first list. Needs the plugin (pip install ./examples/plugin).
//   toolkit train examples/plugin/configs/ud_ewt_covington.jsonnet -s runs/ewt_covington
//
// Covington compares each word with every word to its left: a parse of n words takes at most
// n(n + 1)/2 + n actions (the oracle's average on EWT is 2.7 per word), so the search and the
// decoder's positions are sized for sentences of up to 88 words (n(n + 3)/2 <= 4096).
local base = import '../../../jsonnet_configs/ud_ewt_stack_transformer.jsonnet';
local steps = 4096;

base {
  grammar: { type: 'covington' },
  model+: {
    decoder+: { positional_encoding: { type: 'sinusoidal', max_length: steps } },
    search+: { max_steps: steps },
  },
  trainer+: { validation_search+: { max_steps: steps } },
}
