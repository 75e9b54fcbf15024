// PhraseTransformer on GEO (Nguyen et al., 2022): geo_transformer.jsonnet with an encoder whose
// eight heads attend over words (n = 0) and 2-, 3- and 4-gram phrases (n-gram BiLSTM states), in
// every layer. Everything else is unchanged, so the two compare on the same budget.
//   residual gate (Eq. 13):   -o '{"model.encoder.residual_gate": true}'
//   Sum variant (Eq. 14-15):  -o '{"model.encoder.composition": "sum"}'
//   first layer only:         -o '{"model.encoder.phrase_layers": [1]}'
local base = import 'geo_transformer.jsonnet';

base {
  model+: {
    encoder: base.model.encoder {
      type: 'phrase_transformer',
      layers+: { num_heads:: null },  // one head per gram size
      gram_sizes: [0, 0, 2, 2, 3, 3, 4, 4],
    },
  },
}
