// The main job on GEO's 600 training questions alone, without the data recombination and the schema
// templates (docs/recombination.md), with 120 epochs for about as many steps:
//   toolkit train jsonnet_configs/geo_raw_transformer.jsonnet -s runs/geo_questions_only -o jsonnet_configs/overrides/geo_raw_questions_only.jsonnet
{
  dataset_reader: {
    strategies: {
      entities: { ratio: 0 },
      whole_phrases: { ratio: 0 },
      concat: { ratio: 0 },
      templates: { ratio: 0 },
    },
  },
  trainer: { num_epochs: 120 },
}
