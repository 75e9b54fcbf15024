// Data recombination (Jia & Liang 2016, toolkit/data/dataset_readers/recombination.py): ABSWHOLEPHRASES on GEO.
//   toolkit train jsonnet_configs/geo_transformer.jsonnet -s runs/geo_awp -o jsonnet_configs/overrides/recombination_geo_awp.jsonnet
// Only training data is augmented: validation and test data are read by the plain reader.
// One fixed augmented set per run (the paper resamples every epoch); ratios are new examples per original.
{
  dataset_reader: {
    type: 'recombination',
    base_reader: { type: 'tsv' },
    strategies: [{ type: 'abs_whole_phrases', ratio: 0.5 }],
    seed: 13,
  },
  validation_dataset_reader: { type: 'tsv' },
}
