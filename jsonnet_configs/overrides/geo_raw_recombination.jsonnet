// Jia & Liang's data recombination on GEO's raw Prolog data (docs/recombination.md), for the main job:
//   toolkit train jsonnet_configs/geo_raw_transformer.jsonnet -s runs/geo_recombination -o jsonnet_configs/overrides/geo_raw_recombination.jsonnet
// Ratios are new examples per training question (600): whole phrases 0.25, entities 0.1, two questions in one 0.1
// (about 270 examples more). Each draw is anonymized as the training file is, and kept only if the grammar derives it
// and Geobase answers it. Add -o jsonnet_configs/overrides/geo_raw_templates.jsonnet for the schema templates too.
{
  dataset_reader: {
    strategies: {
      entities: { ratio: 0.1 },
      whole_phrases: { ratio: 0.25 },
      concat: { ratio: 0.1 },
    },
  },
}
