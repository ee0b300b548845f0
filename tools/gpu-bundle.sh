#!/usr/bin/env bash
# gpu-bundle.sh -- packs what tools/gpu-check.sh runs on a GPU machine that builds
# nothing and reaches no package registry: the server, shim and emulated device, the
# test and benchmark programs and suites it runs (debug sections stripped), and the
# Debian packages of every library they link that a GPU image may lack, as .deb
# files (gpu-check.sh unpacks them there into a private prefix with dpkg -x). glibc,
# libstdc++, libgcc and NVIDIA's libraries are left to the GPU machine. One file,
# extracted at the repository's root there; a manifest inside
# (build/gpu-bundle.txt) lists what it holds.
#   usage: tools/gpu-bundle.sh [BUILD [OUTFILE]]   (make gpu-bundle)
# Exits 1 when a program is missing, a library's package cannot be named or fetched,
# or the bundle is over its limit (GPU_BUNDLE_MAX_MIB, default 56: a device call
# carries 64 MiB with the working tree).
set -euo pipefail
build=${1:-build}
outfile=${2:-$build/gpu-bundle.tar.xz}
max_mib=${GPU_BUNDLE_MAX_MIB:-56}
debcache=$build/gpu-debs # downloaded once, kept across builds

# What gpu-check.sh runs, relative to the build directory.
files=(cudarem-server cudarem-smi libcudarem.so libcudarem-emu.so lib
       cuda cuda-static kernels kernels-static dnn dnn-static driver examples
       stress stress-static load/loadmix bench/bin
       tests/check_e2e_programs tests/check_e2e_roundtrips tests/check_e2e_faults tests/check_e2e_stress)

# Libraries the GPU machine brings itself: the C and C++ runtimes, NVIDIA's.
system_lib='^(libc|libm|libdl|librt|libpthread|libresolv|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn[a-z_]*|libnvidia-[a-z-]*|libnvrtc|libnvJitLink)\.so'

stage=$(mktemp -d /tmp/cudarem-bundle.XXXXXX)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build/gpu-debs" "$debcache"

for f in "${files[@]}"; do
    [ -e "$build/$f" ] || { echo "gpu-bundle: $build/$f is missing: run make gpu-bundle" >&2; exit 1; }
    mkdir -p "$stage/build/$(dirname "$f")"
    cp -a "$build/$f" "$stage/build/$f"
done
# The Check suites' own logs and scratch files are not part of it.
find "$stage/build" -name '*.log' -delete

# x86-64 ELF files (a cubin is ELF too, for the GPU: left as it is)
elves=$(find "$stage/build" -type f -exec sh -c 'readelf -h "$1" 2>/dev/null | grep -q "X86-64" && echo "$1"' _ {} \;)
for e in $elves; do strip --strip-debug "$e"; done

# Every library the programs resolve here, less what the GPU machine brings and our own.
libs=$(for e in $elves; do ldd "$e" 2>/dev/null; done | awk '$2 == "=>" && $3 ~ /^\// {print $1 " " $3}' |
       sort -u | grep -Ev "$system_lib" | grep -v "$(realpath "$build")" | awk '{print $2}' | sort -u)
packages=()
for l in $libs; do
    real=$(readlink -f "$l")
    pkg=$(dpkg -S "$real" 2>/dev/null || dpkg -S "*/$(basename "$real")" 2>/dev/null || true)
    pkg=${pkg%%:*}
    [ -n "$pkg" ] || { echo "gpu-bundle: no Debian package owns $real ($l)" >&2; exit 1; }
    packages+=("$pkg")
done
# libtirpc reads /etc/netconfig from its common package.
mapfile -t packages < <(printf '%s\n' "${packages[@]}" libtirpc-common | sort -u)
# The installed version when the archive still has it, else the archive's (a binNMU
# rebuilt since, say): the same library, its version named in the manifest.
debs=()
for p in "${packages[@]}"; do
    arch=$(dpkg-query -W -f='${Architecture}' "$p")
    deb=$(ls "$debcache/${p}_"*"_$arch.deb" 2>/dev/null | head -1 || true)
    if [ -z "$deb" ]; then
        (cd "$debcache" && { apt-get download -q "$p=$(dpkg-query -W -f='${Version}' "$p")" ||
                             apt-get download -q "$p"; } >/dev/null 2>&1) || {
            echo "gpu-bundle: cannot download the package $p (apt-get download $p)" >&2; exit 1; }
        deb=$(ls "$debcache/${p}_"*"_$arch.deb" 2>/dev/null | head -1 || true)
    fi
    [ -n "$deb" ] || { echo "gpu-bundle: apt-get download $p wrote no .deb" >&2; exit 1; }
    cp "$deb" "$stage/build/gpu-debs/"
    debs+=("$(basename "$deb")")
done

glibc_needed=$(for e in $elves; do objdump -T "$e" 2>/dev/null; done | grep -o 'GLIBC_2\.[0-9.]*' | sort -uV | tail -1)
{
    echo "cudarem GPU bundle"
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "built: $(date -u +%FT%TZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -1)"
    echo "glibc needed: ${glibc_needed#GLIBC_}"
    echo "packages (build/gpu-debs, unpacked there into a private prefix):"
    for d in "${debs[@]}"; do echo "  $d"; done
    echo "programs:"
    for f in "${files[@]}"; do echo "  build/$f"; done
} >"$stage/build/gpu-bundle.txt"

mkdir -p "$(dirname "$outfile")"
tar -C "$stage" -cf - build | xz -T0 -6 >"$outfile.tmp"
mv "$outfile.tmp" "$outfile"
bytes=$(stat -c %s "$outfile")
mib=$(awk -v b="$bytes" 'BEGIN {printf "%.1f", b / 1048576}')
echo "gpu-bundle: $outfile: $mib MiB ($(du -sh "$stage/build" | cut -f1) unpacked; ${#packages[@]} Debian packages; glibc ${glibc_needed#GLIBC_} needed)"
if [ "$bytes" -gt $((max_mib << 20)) ]; then
    echo "gpu-bundle: over its limit of $max_mib MiB" >&2
    exit 1
fi
