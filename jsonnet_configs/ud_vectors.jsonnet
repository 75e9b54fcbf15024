// The parser of ud.jsonnet reading a spaCy pipeline's static word vectors too (token embedder
// 'spacy_vectors': frozen, looked up per word, so it parses at the same speed). The default is
// French Sequoia with fr_core_news_md's 300-d vectors (pip install "parsing-toolkit[ud-anchors]"):
//
//   toolkit train jsonnet_configs/ud_vectors.jsonnet -s runs/ud_fr_vectors
//
// Another language names its treebank and a pipeline with vectors for it:
//   -o '{"treebank": "nl_alpino", "model.token_embedders.vectors.pipeline": "nl_core_news_md"}'
// The archive records the pipeline's name, version and the vectors' SHA-256, and is refused where
// the installed pipeline differs.
local base = import 'ud.jsonnet';

base {
  treebank: 'fr_sequoia',
  model+: { token_embedders+: { vectors: { type: 'spacy_vectors', pipeline: 'fr_core_news_md' } } },
}
