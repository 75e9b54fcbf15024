// geo_raw_transformer.jsonnet (raw GEO questions, answered from Geobase) reading through
// all-MiniLM-L6-v2 beside its own word embedding; see minilm.libsonnet for the embedder, what to
// install, and the override that fine-tunes it. MiniLM reads the question with its entity names
// replaced by placeholders (e0, e1, ...), as the parser does.
local base = import 'geo_raw_transformer.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: { token_embedders: { minilm: minilm { warmup_steps: 200 } } },
}
