// A dependency parser for any Universal Dependencies treebank, named at the config's top level:
//
//   toolkit train jsonnet_configs/ud.jsonnet -s runs/fr -o '{"treebank": "fr_sequoia"}'
//
// finds DATA_ROOT/*/fr_sequoia-ud-{train,dev,test}.conllu (toolkit/data/ud_treebanks.py; a name not
// there is refused with the list of those that are). The parser is the fast one with spelling
// features and pseudo-projective actions (ud_ewt_state_mlp_hashed.jsonnet) with two encoder
// layers, trained for at most 28 minutes: nothing in it is English but the default treebank. The
// readers record the treebank's language (how words are lower-cased, how raw text is tokenized), and
// the parser tags each word's UPOS and FEATS from the same encoder (grammar.tags), so its output is
// a full UD analysis.
local base = import 'ud_ewt_state_mlp_hashed.jsonnet';

base {
  treebank: 'en_ewt',
  // the treebank gives the data paths; a path named here or in an override wins over its file
  train_data_path:: null,
  validation_data_path:: null,
  test_data_path:: null,
  grammar+: { tags: ['upos', 'feats'] },
  model+: { encoder+: { layers+: { num_layers: 2 } } },
  metrics: [
    { type: 'attachment_scores' },
    { type: 'tag_accuracy', field: 'upos', name: 'upos_accuracy' },
    { type: 'tag_accuracy', field: 'feats', name: 'feats_accuracy' },
  ],
  // A treebank of 50,000 words is an epoch of 10 seconds: the time budget, not the epochs, ends training.
  trainer+: { max_minutes: 28, num_epochs: 200, patience: 10 },
}
