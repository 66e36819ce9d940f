#!/usr/bin/env bash
# Generates our own bindings (rust/kapi/bindings_generated.rs) over the
# headers in rust/kapi/bindings_helper.h, with exactly the bindgen options and
# clang flags the kernel build in KDIR recorded for its own bindings, so the
# layouts match the kernel the modules are built against.
#   usage: gen-bindings.sh KDIR OUT
set -euo pipefail
kdir=$1
out=$(realpath -m "$2")
top=$(cd "$(dirname "$0")/.." && pwd)
header="$top/rust/kapi/bindings_helper.h"
cmdfile="$kdir/rust/bindings/.bindings_generated.rs.cmd"
[ -f "$cmdfile" ] || { echo "gen-bindings: $cmdfile missing: is $kdir a built Rust-enabled kernel?" >&2; exit 1; }

# "savedcmd_... := bindgen HEADER OPTS -o OUT -- CFLAGS ; sed ..." -> OPTS, CFLAGS
recorded=$(head -n 1 "$cmdfile" | sed -e 's/^[^=]*:= //' -e 's/ ; .*$//')
opts=${recorded%% -- *}
cflags=${recorded#* -- }
opts=${opts#bindgen rust/bindings/bindings_helper.h }
opts=${opts/--ctypes-prefix ffi/--ctypes-prefix kernel::ffi}
opts=$(echo "$opts" | sed -e 's/-o rust\/bindings\/bindings_generated.rs//')
cflags=$(echo "$cflags" | sed -e 's/-Wp,-MMD,[^ ]*//')

allow=()
while IFS= read -r line; do
	case "$line" in
	'// allow '*) allow+=("--allowlist-${line#// allow }") ;;
	'// opaque '*) allow+=("--opaque-type ${line#// opaque }") ;;
	esac
done <"$header"
allow=("${allow[@]/ /=}")  # "--allowlist-function=NAME", "--opaque-type=NAME"

cd "$kdir"
tmp=$(mktemp "$out.XXXXXX")
# shellcheck disable=SC2086 # opts and cflags are word lists by design
eval bindgen "\"$header\"" $opts "${allow[@]}" -o "\"$tmp\"" -- $cflags -I"\"$top/include\""
sed -Ei 's/pub const RUST_CONST_HELPER_([a-zA-Z0-9_]*)/pub const \1/g' "$tmp"
if [ -f "$out" ] && cmp -s "$tmp" "$out"; then
	rm -f "$tmp"
else
	mv "$tmp" "$out"
fi
