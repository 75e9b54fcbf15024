// GEO semantic parsing with the plugin's post-order tree codec: the decoder emits each node after
// its children (`$0/0 e/0 ... lambda/3`), closed by the end symbol. Everything else is the
// toolkit's geo_transformer.jsonnet, so the two compare on one budget. Needs the plugin:
//   pip install ./examples/plugin   (or --include-package toolkit_example_plugin with it on PYTHONPATH)
//   toolkit train examples/plugin/configs/geo_postorder.jsonnet -s runs/geo_postorder
local base = import '../../../jsonnet_configs/geo_transformer.jsonnet';

base {
  grammar: { type: 'postorder', max_nodes: 150 },
}
