// Data recombination (Jia & Liang 2016, toolkit/data/dataset_readers/recombination.py): AWP and CONCAT-2 on GEO,
// the two strategies that each gain on our anonymized copy (AE adds only a lone `s1`; see docs/recombination.md).
//   toolkit train jsonnet_configs/geo_transformer_minilm.jsonnet -s runs/geo_minilm_awp_c2 -o jsonnet_configs/overrides/recombination_geo_awp_c2.jsonnet
// Only training data is augmented: validation and test data are read by the plain reader.
{
  dataset_reader: {
    type: 'recombination',
    base_reader: { type: 'tsv' },
    strategies: [
      { type: 'abs_whole_phrases', ratio: 0.5 },
      { type: 'concat', k: 2, ratio: 0.5, max_target_tokens: 150 },
    ],
    seed: 13,
  },
  validation_dataset_reader: { type: 'tsv' },
}
