#!/usr/bin/env bash
# Raw-GEO variants trained side by side on one GPU (120 epochs each, as the config), each then asked
# the 280 raw test questions; the predictions land in OUT as NAME.jsonl, with each run's log tail.
# Denotation is scored where swipl is (the GPU machine may lack it):
#   python benchmarks/geo_raw_variants.py OUT/*.jsonl        (compares answers with the gold queries')
#
#   DATA_ROOT=../shared/data OUT=runs/variants bash benchmarks/geo_raw_variants.sh
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 DATA_ROOT=${DATA_ROOT:-../shared/data} OMP_NUM_THREADS=${OMP_NUM_THREADS:-3}
out=${OUT:-runs/variants}; mkdir -p "$out"
sequence='"grammar.grammar": {"type": "sequence", "max_length": 150}, "model.decoder.positional_encoding": null'
untyped='"dataset_reader.anonymizer.type_words": false, "grammar.anonymizer.type_words": false'
phrase='"model.encoder.type": "phrase_transformer", "model.encoder.gram_sizes": [0,0,2,2,3,3,4,4], "model.encoder.layers.num_heads": 8, "model.encoder.composition": "sum"'
common='"metrics": [{"type": "exact_match"}], "model.search.execution_guided": null, "trainer.device": "cuda"'
declare -A runs=(
  [sequence]="{$common, $sequence, $untyped}"
  [tree_untyped]="{$common, $untyped}"
  [tree]="{$common}"
  [tree_seed7]="{$common, \"random_seed\": 7}"
  [tree_phrase]="{$common, $phrase}"
)
test=$DATA_ROOT/geo-raw/geo_prolog_test.tsv
for name in "${!runs[@]}"; do
  (
    start=$SECONDS
    python3 -m toolkit train jsonnet_configs/geo_raw_transformer.jsonnet -s "/tmp/geo_raw_$name" -f -o "${runs[$name]}" > "/tmp/geo_raw_$name.log" 2>&1
    echo "$name: trained in $((SECONDS - start)) s; $(grep -o 'test: .*' "/tmp/geo_raw_$name.log" | tail -1)"
    cut -f1 "$test" | python3 -m toolkit predict "/tmp/geo_raw_$name/model.tar.gz" - > "$out/$name.jsonl" 2>> "/tmp/geo_raw_$name.log"
    tail -c 3000 "/tmp/geo_raw_$name.log" > "$out/$name.log"
  ) &
done
wait
