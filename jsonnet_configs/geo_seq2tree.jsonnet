// Sequence-to-tree parser on GEO (Shiv & Quirk, 2019): the decoder emits arity-annotated tree
// nodes (`and/3`, `state:t/1`, `$0/0`) in depth-first order of the left-child right-sibling
// binarized tree, and each input symbol carries its node's tree positional encoding.
// Everything else is geo_transformer.jsonnet, so the two compare on the same budget.
//   breadth-first:  -o '{"grammar.type": "lcrs_bfs"}'
//   n-ary (no binarization; ATIS has a node with 15 children): -o '{"grammar": {"type": "nary_dfs", "max_degree": 16}, "model.decoder.positional_encoding.degree": 16}'
local base = import 'geo_transformer.jsonnet';

base {
  grammar: { type: 'lcrs_dfs', max_nodes: 150 },
  model+: {
    decoder+: { positional_encoding: { type: 'tree', degree: 2, max_depth: 32, parameterized: true } },
  },
}
