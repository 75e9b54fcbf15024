// A Stack-Transformer dependency parser on UD English-EWT with the plugin's arc-eager transitions
// (SHIFT, LEFT-ARC, RIGHT-ARC, REDUCE). Everything else is the toolkit's
// ud_ewt_stack_transformer.jsonnet: the stack and buffer heads read arc-eager's stack and buffer
// through the same state features. Needs the plugin (pip install ./examples/plugin).
//   toolkit train examples/plugin/configs/ud_ewt_arc_eager.jsonnet -s runs/ewt_arc_eager
local base = import '../../../jsonnet_configs/ud_ewt_stack_transformer.jsonnet';

base {
  grammar+: { type: 'arc_eager' },
}
