#!/usr/bin/env bash
# The CUDA and mixed-precision paths end to end, on a machine with a GPU (not run by CI, which has none):
# a tiny GEO seq2seq parser trained in float32, bf16 and fp16, evaluated and predicted on CUDA; a bf16
# Stack-Transformer dependency parser scored on CUDA and on the CPU (the two must agree); then the tests
# that take the GPU when there is one. Prints what to compare; takes about 4 minutes on one H100.
#
#   DATA_ROOT=../shared/data bash benchmarks/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch, sys; sys.exit(not torch.cuda.is_available())" || { echo "no CUDA device here: this check is for a machine with a GPU" >&2; exit 1; }
data=${DATA_ROOT:-../shared/data}
work=$(mktemp -d)
head -400 "$data/geo/train.txt" > "$work/geo_train.tsv"
head -100 "$data/geo/test.txt" > "$work/geo_test.tsv"
python3 - "$data/ud-english-ewt" "$work" <<'PY'
import sys
ewt, work = sys.argv[1:]
for split, size in (("train", 800), ("dev", 200)):
    blocks = open(f"{ewt}/en_ewt-ud-{split}.conllu", encoding="utf-8").read().split("\n\n")
    open(f"{work}/ewt_{split}.conllu", "w", encoding="utf-8").write("\n\n".join(blocks[:size]) + "\n\n")
PY
tk() { python3 -m toolkit "$@"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
export PYTHONUNBUFFERED=1 TRAIN="$work/geo_train.tsv" TEST="$work/geo_test.tsv"
for precision in null '"bf16"' '"fp16"'; do
  echo "== seq2seq, cuda, mixed_precision $precision"
  start=$SECONDS
  tk train tests/fixtures/tiny_seq2seq.jsonnet -s "$work/seq_$SECONDS" -o "{\"trainer.device\": \"cuda\", \"trainer.mixed_precision\": $precision, \"trainer.num_epochs\": 20}" 2>&1 |
    grep -E "test:|rror|epoch 19" | cut -c1-400 | tail -3
  echo "train: $((SECONDS - start)) s (process start and archive included)"
done
tk train tests/fixtures/tiny_seq2seq.jsonnet -s "$work/seq" -o '{"trainer.device": "cuda", "trainer.mixed_precision": "bf16", "trainer.num_epochs": 20}' > /dev/null 2>&1
tk evaluate "$work/seq/model.tar.gz" "$work/geo_test.tsv" --device cuda --beam-size 5
cut -f1 "$work/geo_test.tsv" | tk predict "$work/seq/model.tar.gz" - --device cuda | head -2
echo "records for 100 lines: $(cut -f1 "$work/geo_test.tsv" | tk predict "$work/seq/model.tar.gz" - --device cuda | wc -l)"
echo "== dependency (stack_transformer), cuda, bf16; then scored on cuda and on the cpu"
TRAIN="$work/ewt_train.conllu" TEST="$work/ewt_dev.conllu" tk train tests/fixtures/tiny_dependency.jsonnet -s "$work/dep" \
  -o '{"trainer.device": "cuda", "trainer.mixed_precision": "bf16", "trainer.num_epochs": 10, "model.decoder.type": "stack_transformer", "model.decoder.layers.num_heads": 2}' 2>&1 |
  grep -E "test:|rror" | tail -2
tk evaluate "$work/dep/model.tar.gz" "$work/ewt_dev.conllu" --device cuda
tk evaluate "$work/dep/model.tar.gz" "$work/ewt_dev.conllu" --device cpu
echo "== tests that take the GPU when there is one"
python3 -m pytest -q -p no:cacheprovider tests/test_device.py tests/test_decoding_paths.py tests/test_stack_transformer.py tests/test_mixed_precision.py 2>&1 | tail -3
rm -rf "$work"
