// Data recombination (Jia & Liang 2016, toolkit/data/dataset_readers/recombination.py): CONCAT-2 on GEO.
//   toolkit train jsonnet_configs/geo_transformer.jsonnet -s runs/geo_c2 -o jsonnet_configs/overrides/recombination_geo_c2.jsonnet
// Only training data is augmented: validation and test data are read by the plain reader.
// One fixed augmented set per run (the paper resamples every epoch); ratios are new examples per original.
{
  dataset_reader: {
    type: 'recombination',
    base_reader: { type: 'tsv' },
    strategies: [{ type: 'concat', k: 2, ratio: 0.5, max_target_tokens: 150 }],
    seed: 13,
  },
  validation_dataset_reader: { type: 'tsv' },
}
