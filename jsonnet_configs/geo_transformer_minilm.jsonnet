// geo_transformer.jsonnet (GEO) reading through all-MiniLM-L6-v2 beside its own word embedding;
// see minilm.libsonnet for the embedder, what to install, and the override that fine-tunes it.
local base = import 'geo_transformer.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: { token_embedders: { minilm: minilm { warmup_steps: 200 } } },
}
