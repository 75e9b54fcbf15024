// multi30k_transformer.jsonnet with the hypernode encoder ("attention over phrases"): every span
// of 2 source words is a hypernode, and each encoder layer adds phase 2, attention within
// phrases with a sigmoid on its output. The decoder, data and budget are unchanged.
//   n-grams up to 3 words:  -o '{"model.encoder.phrases.max_n": 3}'
//   linear (no sigmoid):    -o '{"model.encoder.linear": true}'
local base = import 'multi30k_transformer.jsonnet';

base {
  model+: {
    encoder: base.model.encoder {
      type: 'hypernode_transformer',
      phrases: { type: 'ngram', max_n: 2 },
    },
  },
}
