#!/usr/bin/env bash
# Builds everything on a fresh machine and runs the lab demo, showing the
# VMs' consoles as they run.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

bash scripts/setup.sh
bash scripts/build-kernel.sh
make -s lab
lnet_build_tools
python3 tests/lab/lab.py --follow --kernel-filter 'lnet|ko2iblnd|rxe|LNet' demo_o2ib
