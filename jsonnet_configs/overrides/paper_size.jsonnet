// The PhraseTransformer paper's GPU-size Transformer: 6+6 layers, d_model 512, 8 heads, FF 2048,
// Adam(0.9, 0.98, 1e-9) with the Noam schedule (warmup 4000). Merge it into any seq2seq config:
//   toolkit train jsonnet_configs/geo_transformer.jsonnet -s runs/geo_big -o jsonnet_configs/overrides/paper_size.jsonnet
local size = { input_dim: 512, layers: { num_layers: 6, num_heads: 8, ff_dim: 2048 } };
{
  'model.encoder': size,
  'model.decoder': size,
  'trainer.optimizer': { type: 'adam', lr: 1.0, betas: [0.9, 0.98], eps: 1e-9 },
  'trainer.learning_rate_scheduler': { type: 'noam', model_size: 512, warmup_steps: 4000, factor: 1.0 },
}
