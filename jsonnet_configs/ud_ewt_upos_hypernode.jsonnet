// UPOS tagging on UD English EWT with the hypernode encoder ("attention over phrases"): every
// span of 2 words is a hypernode, and each layer adds phase 2, attention within phrases with a
// sigmoid on its output. Everything else is ud_ewt_upos_transformer.jsonnet, so the two compare
// on the same batches and budget. Variants:
//   n-grams up to 3 words:      -o '{"model.encoder.phrases.max_n": 3}'
//   linear (no sigmoid):        -o '{"model.encoder.linear": true}'
//   spaCy dependency edges:     ud_ewt_upos_hypernode_spacy.jsonnet
local base = import 'ud_ewt_upos_transformer.jsonnet';

base {
  model+: {
    encoder: base.model.encoder {
      type: 'hypernode_transformer',
      phrases: { type: 'ngram', max_n: 2 },
    },
  },
}
