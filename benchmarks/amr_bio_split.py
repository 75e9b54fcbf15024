"""Write the one split of the 838 Bio AMR graphs in ``../shared`` (``jsonnet_configs/splits/amr_bio.json``), by document.

Sentences of one article share names, abbreviations and phrasing, so a split by graph would test on
sentences whose neighbours were trained on. The split is by document (the ``# ::id`` before its
last ``.``), fixed once and never tuned on:

- test: the article ``a_pmid_2256_9000`` (96 graphs), all among the 610 with ISI's gold alignments,
  so that the aligner's held-apart figure and the parser's are on the same sentences;
- dev: the article ``a_pmid_2094_2929`` (70 graphs) and every other BEL BioCreative document (the
  ``bel_pmid_*`` ones at odd positions in the file: short sentences of another style);
- train: the rest.

    python benchmarks/amr_bio_split.py [--data DATA_ROOT]
"""

import argparse
import json
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "jsonnet_configs" / "splits" / "amr_bio.json"
SOURCE = "amr-bio-partial/amr-release-training-bio-first838.txt"
TEST_DOCUMENT, DEV_DOCUMENT = "a_pmid_2256_9000", "a_pmid_2094_2929"


def document(graph_id: str) -> str:
    return graph_id.rsplit(".", 1)[0]


def split(ids: list[str]) -> dict[str, list[str]]:
    documents = list(dict.fromkeys(document(graph_id) for graph_id in ids))
    bel = [name for name in documents if name.startswith("bel_")]
    dev_documents = {DEV_DOCUMENT, *bel[1::2]}
    parts: dict[str, list[str]] = {"train": [], "dev": [], "test": []}
    for graph_id in ids:
        name = document(graph_id)
        parts["test" if name == TEST_DOCUMENT else "dev" if name in dev_documents else "train"].append(graph_id)
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=os.environ.get("DATA_ROOT", str(REPO.parent / "shared" / "data")))
    args = parser.parse_args()
    text = (Path(args.data) / SOURCE).read_text(encoding="utf-8")
    ids = re.findall(r"^# ::id (\S+)", text, flags=re.MULTILINE)
    parts = split(ids)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps({"source": SOURCE, "rule": "by document: see benchmarks/amr_bio_split.py", **parts}, indent=1) + "\n", encoding="utf-8")
    print(", ".join(f"{name}: {len(part)} graphs, {len({document(i) for i in part})} documents" for name, part in parts.items()))


if __name__ == "__main__":
    main()
