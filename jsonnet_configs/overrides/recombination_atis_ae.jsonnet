// Data recombination (Jia & Liang 2016, toolkit/data/dataset_readers/recombination.py): ABSENTITIES on ATIS: typed constants whose word is in the question (afternoon:pd, first:cl, breakfast:me ...).
//   toolkit train jsonnet_configs/atis_transformer.jsonnet -s runs/atis_ae -o jsonnet_configs/overrides/recombination_atis_ae.jsonnet
// Only training data is augmented: validation and test data are read by the plain reader.
// One fixed augmented set per run (the paper resamples every epoch); ratios are new examples per original.
{
  dataset_reader: {
    type: 'recombination',
    base_reader: { type: 'tsv' },
    strategies: [{ type: 'abs_entities', ratio: 0.5 }],
    seed: 13,
  },
  validation_dataset_reader: { type: 'tsv' },
}
