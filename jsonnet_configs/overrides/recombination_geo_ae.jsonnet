// Data recombination (Jia & Liang 2016, toolkit/data/dataset_readers/recombination.py): ABSENTITIES on GEO. GEO's entities are all placeholders (s0, c0, ...), so AE can only swap in
// placeholders of another number (a lone s1): see docs/recombination.md for how few new examples that makes.
//   toolkit train jsonnet_configs/geo_transformer.jsonnet -s runs/geo_ae -o jsonnet_configs/overrides/recombination_geo_ae.jsonnet
// Only training data is augmented: validation and test data are read by the plain reader.
// One fixed augmented set per run (the paper resamples every epoch); ratios are new examples per original.
{
  dataset_reader: {
    type: 'recombination',
    base_reader: { type: 'tsv' },
    strategies: [{ type: 'abs_entities', ratio: 0.5, swap_placeholders: true }],
    seed: 13,
  },
  validation_dataset_reader: { type: 'tsv' },
}
