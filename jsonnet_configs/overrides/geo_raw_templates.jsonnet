// Questions written from Geobase's schema (toolkit/data/geo_templates.txt, docs/recombination.md) for the main job:
//   toolkit train jsonnet_configs/geo_raw_transformer.jsonnet -s runs/geo_templates -o jsonnet_configs/overrides/geo_raw_templates.jsonnet
// 0.5 new examples per training question (300), filled with Geobase's entities; each is anonymized as the training
// file is, and kept only if the grammar derives it and Geobase answers it.
{
  dataset_reader: {
    strategies: {
      templates: { ratio: 0.5 },
    },
  },
}
