#!/bin/sh
# Builds chessclock-protocol for a Cortex-M0 (thumbv6m-none-eabi: no std, no
# allocator, no atomics), proving the crate is usable by device firmware.
# Usage: protocol/check-embedded.sh   (from anywhere in the workspace)
set -eu
cd "$(dirname "$0")/.."
target=thumbv6m-none-eabi
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    rustup target add "$target"
fi
cargo build -p chessclock-protocol --target "$target"
cargo build -p chessclock-protocol --target "$target" --release
echo "chessclock-protocol builds for $target"
