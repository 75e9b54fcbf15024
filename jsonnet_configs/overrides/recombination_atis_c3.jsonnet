// Data recombination (Jia & Liang 2016, toolkit/data/dataset_readers/recombination.py): CONCAT-3 on ATIS (LFs over the grammar's max_length 150 are not drawn).
//   toolkit train jsonnet_configs/atis_transformer.jsonnet -s runs/atis_c3 -o jsonnet_configs/overrides/recombination_atis_c3.jsonnet
// Only training data is augmented: validation and test data are read by the plain reader.
// One fixed augmented set per run (the paper resamples every epoch); ratios are new examples per original.
{
  dataset_reader: {
    type: 'recombination',
    base_reader: { type: 'tsv' },
    strategies: [{ type: 'concat', k: 3, ratio: 0.5, max_target_tokens: 150 }],
    seed: 13,
  },
  validation_dataset_reader: { type: 'tsv' },
}
