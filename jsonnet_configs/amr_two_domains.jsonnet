// The fine-tuned MiniLM AMR parser (amr_stack_transformer_minilm.jsonnet) trained on two domains at once: The Little
// Prince (AMR 3.0: 1,274 train / 145 dev / 143 test graphs) and Bio AMR's 838 graphs in ../shared, split once by
// document into 629 train / 113 dev / 96 test (splits/amr_bio.json, written by benchmarks/amr_bio_split.py; never
// tuned on its test part). Validation and test score each domain beside the whole (validation_bio_smatch, ...); early
// stopping follows the whole. Raw # ::snt text (Bio's is not tokenized) is read by the same tokenizer as predict's
// (spaCy's, tags kept whole), so training and parsing see the same words. Names come first from a tagger learned from
// the training graphs' aligned names (grammar.learn_names: proteins, drugs and cell lines no news NER finds), then from
// spaCy's NER.
//   toolkit train jsonnet_configs/amr_two_domains.jsonnet -s runs/amr_two_domains -o '{"model.token_embedders.minilm.freeze": false}'
// Oracle per domain, fitted on the training data: python benchmarks/amr_domains.py jsonnet_configs/amr_two_domains.jsonnet
local base = import 'amr_stack_transformer_minilm.jsonnet';
local split = import 'splits/amr_bio.json';
local data_root = std.extVar('DATA_ROOT');
local lp = data_root + '/amr-little-prince/amr-bank-struct-v3.0-';
local bio = data_root + '/' + split.source;

base {
  dataset_reader+: { tokenizer: 'spacy' },
  grammar+: { learn_names: true },
  train_data_path: { little_prince: lp + 'train.txt', bio: { path: bio, ids: split.train } },
  validation_data_path: { little_prince: lp + 'dev.txt', bio: { path: bio, ids: split.dev } },
  test_data_path: { little_prince: lp + 'test.txt', bio: { path: bio, ids: split.test } },
  // 258 validation graphs decode slowly on a CPU: every other epoch, and 85 minutes in all on the 2-core CI machine
  trainer+: { validate_every: 2, max_minutes: 85 },
}
