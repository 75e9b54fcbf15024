// The bracketed grammar's constraints learned from the training targets (toolkit/grammars/bracketed.py):
// each operator's argument counts, and the atoms training always copied from the question (ci0, st0, ...)
// only where the question has them. For the geo_* and atis_* configs with a bracketed grammar:
//   toolkit train jsonnet_configs/atis_transformer.jsonnet -s runs/atis -o jsonnet_configs/overrides/learned_constraints.jsonnet
// Training's loss never sees the grammar's masks, so they change decoding only; the learned tables go into
// the run's config.json, and the archive decodes with them without the training data.
{
  'grammar.restrict_arities': true,
  'grammar.copy_atoms': true,
}
