#!/bin/sh
# Seeds fuzz/corpus/<target>/ with every frame and stream of
# ../vectors/vectors.json (wire bytes; for the decoder a leading step byte).
set -eu
cd "$(dirname "$0")"
python3 - <<'PY'
import json, os
d = json.load(open("../vectors/vectors.json"))
os.makedirs("corpus/decoder", exist_ok=True)
items = [(v["name"], v["wire"]) for v in d["valid"] + d["invalid"]]
items += [(s["name"], s["bytes"]) for s in d["streams"]]
for name, hexs in items:
    b = bytes(int(x, 16) for x in hexs.split())
    for step in (0, 6, 31):
        open(f"corpus/decoder/{name}-{step}", "wb").write(bytes([step]) + b)
print(f"{len(items) * 3} seeds in corpus/decoder")
PY
