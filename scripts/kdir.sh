#!/usr/bin/env bash
# Prints the lab kernel's build directory (the default KDIR).
. "$(dirname "$0")/env.sh"
lnet_kdir
