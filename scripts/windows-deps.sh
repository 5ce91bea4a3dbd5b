#!/usr/bin/env bash
# Builds the libraries tern needs on Windows, cross-compiled with Debian's mingw-w64 toolchain
# (GCC 12, posix threads) from Debian's own source packages (apt-get source: Debian's patches
# applied by dpkg-source; asio's headers and llhttp's generated C sources from Debian's
# arch-independent binary packages, below), into a prefix a CMake cross build consumes through
# cmake/toolchains/mingw-w64.cmake (docs/building.md, "Windows (cross-built, run under Wine)").
#
#   scripts/windows-deps.sh          installs the toolchain and Wine, builds what is missing,
#                                    prints the prefix as the last line of stdout
#   scripts/windows-deps.sh --tools  only installs the toolchain and Wine
#
# Everything but the prefix goes to stderr. Idempotent: apt-get runs only for missing
# packages, and each library has a stamp file in the prefix, so a re-run after a failure
# builds only what is missing and a warm run takes seconds.
set -euo pipefail

tools_only=0
for arg in "$@"; do
    case "$arg" in
    --tools) tools_only=1 ;;
    *) echo "windows-deps.sh: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done

log() { echo "windows-deps.sh: $*" >&2; }

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { log "run as root or install sudo"; exit 1; }
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

# --- the toolchain, Wine and the tools the source packages build with -------------------
# wine64 runs the 64-bit .exe files; wine gives the `wine` command. dpkg-dev: dpkg-source,
# which apt-get source runs to unpack a source package and apply Debian's patches.
packages=(g++-mingw-w64-x86-64-posix wine64 wine dpkg-dev cmake ninja-build make perl pkg-config
          xz-utils curl python3)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -qq >&2
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
[ "$tools_only" -eq 1 ] && exit 0

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
toolchain="$repo/cmake/toolchains/mingw-w64.cmake"
source_lib="$here/lib/debian-source.sh"
root="${TERN_WINDOWS_DEPS:-$HOME/.cache/tern-deps/mingw64}"
mkdir -p "$root"
# One run at a time on a cache (another engineer's, or another checkout's): a second waits.
exec 9>"$root/.lock"
if ! flock -n 9; then
    log "waiting for another run on $root to finish"
    flock 9
fi

# --- the versions -------------------------------------------------------------------------
# Debian 12 (bookworm) for all but llhttp. llhttp >= 9.2 (tern's floor, cmake/dependencies.cmake):
# Debian 12 has 8.1, and Debian 13's (trixie) 9.2.1 is built from node-undici's source
# package, whose files the archive reached here does not serve (and whose parser is generated
# at build time with node, TypeScript and llparse); Debian's testing suite (forky) ships the
# generated C sources of llhttp as the arch-independent package libllhttp-source, which is
# what is built here. asio: its headers from Debian 12's libasio-dev (arch-independent, the
# same files the source package installs; the archive here does not serve asio's source
# tarball). The newest version of each whose files the archive serves is taken
# (debian-source.sh fetch): here, bookworm's point-release versions, since the archive serves
# no file of the bookworm-security suite's source packages.
"$source_lib" "$root/debian/bookworm" bookworm update
"$source_lib" "$root/debian/forky" forky update
declare -A version suite_of
for pkg in nlohmann-json3 fmtlib zlib libzstd brotli catch2 nghttp2 openssl; do
    version[$pkg]=$("$source_lib" "$root/debian/bookworm" bookworm fetch "$pkg")
    suite_of[$pkg]=bookworm
done
version[libasio-dev]=$("$source_lib" "$root/debian/bookworm" bookworm fetch-deb libasio-dev)
suite_of[libasio-dev]=bookworm
version[libllhttp-source]=$("$source_lib" "$root/debian/forky" forky fetch-deb libllhttp-source)
suite_of[libllhttp-source]=forky

# The order of the builds, fast first, and the Debian package each comes from.
order=(asio nlohmann llhttp fmt zlib zstd brotli catch2 nghttp2 openssl)
declare -A package_of=([asio]=libasio-dev [nlohmann]=nlohmann-json3 [llhttp]=libllhttp-source
                       [fmt]=fmtlib [zlib]=zlib [zstd]=libzstd [brotli]=brotli [catch2]=catch2
                       [nghttp2]=nghttp2 [openssl]=openssl)

# The cache key: every package's version, the build recipe (this script from "the builds" on),
# the toolchain file and the compiler.
key=$({
    for name in "${order[@]}"; do echo "$name ${package_of[$name]} ${version[${package_of[$name]}]}"; done
    sed -n '/^# --- the builds/,$p' "$0"
    cat "$toolchain"
    x86_64-w64-mingw32-gcc-posix --version | head -n 1
} | sha256sum | cut -c1-16)
prefix="$root/$key"
stamps="$prefix/.stamps"
mkdir -p "$prefix/include" "$prefix/lib" "$prefix/bin" "$stamps"
{
    echo "key $key"
    for name in "${order[@]}"; do
        pkg=${package_of[$name]}
        echo "$name $pkg ${version[$pkg]} ${suite_of[$pkg]}"
    done
} >"$prefix/VERSIONS"
touch "$prefix/READY"

# --- the builds ---------------------------------------------------------------------------
export TERN_WINDOWS_DEPS_PREFIX="$prefix"
export CFLAGS="-O2" CXXFLAGS="-O2"
jobs=${TERN_WINDOWS_DEPS_JOBS:-2}
work="$root/build"

# The unpacked source of Debian source package $1 in $work/$1, Debian's patches applied.
unpack() {
    "$source_lib" "$root/debian/${suite_of[$1]}" "${suite_of[$1]}" unpack "$1" "${version[$1]}" "$work/$1"
    echo "$work/$1"
}
# The files of binary package $1 extracted in $work/$1.
extract() {
    rm -rf "${work:?}/$1"
    mkdir -p "$work/$1"
    dpkg-deb -x "$root/debian/${suite_of[$1]}/files/$1_${version[$1]}"/*.deb "$work/$1"
    echo "$work/$1"
}
# Configures, builds and installs CMake project $1 (source dir) with the toolchain file;
# the rest of the arguments are -D options.
cmake_build() {
    local src=$1
    shift
    nice cmake -S "$src" -B "$src/build-mingw" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
        -DBUILD_TESTING=OFF "$@" >&2
    nice cmake --build "$src/build-mingw" -j "$jobs" >&2
    cmake --install "$src/build-mingw" >&2
}

build_asio() {
    local d
    d=$(extract libasio-dev)
    cp -r "$d/usr/include/asio.hpp" "$d/usr/include/asio" "$prefix/include/"
}
build_nlohmann() {
    local d
    d=$(unpack nlohmann-json3)
    cmake_build "$d" -DJSON_BuildTests=OFF -DJSON_Install=ON
}
build_llhttp() {
    local d
    d=$(extract libllhttp-source)
    cmake_build "$d/usr/src/llhttp" -DLLHTTP_BUILD_SHARED_LIBS=ON -DLLHTTP_BUILD_STATIC_LIBS=ON
}
build_fmt() {
    local d
    d=$(unpack fmtlib)
    # Static only: a C++ library's ABI across a DLL boundary is not worth the trouble here.
    cmake_build "$d" -DFMT_DOC=OFF -DFMT_TEST=OFF -DFMT_INSTALL=ON -DBUILD_SHARED_LIBS=OFF
}
build_zlib() {
    local d b
    d=$(unpack zlib)
    b="$d/build-mingw"
    # Static only: Debian's source drops upstream's win32/ folder (it repacks the tarball
    # without it), and zlib's CMakeLists takes the DLL's version resource from there. Only the
    # static library is built (the CMakeLists would build its example programs too) and
    # installed by hand as libz.a, the name its zlib.pc (-lz) and FindZLIB look for.
    nice cmake -S "$d" -B "$b" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" >&2
    nice cmake --build "$b" -j "$jobs" --target zlibstatic >&2
    install -m 644 "$d/zlib.h" "$b/zconf.h" "$prefix/include/"
    install -m 644 "$b/libzlibstatic.a" "$prefix/lib/libz.a"
    mkdir -p "$prefix/lib/pkgconfig"
    install -m 644 "$b/zlib.pc" "$prefix/lib/pkgconfig/"
}
build_zstd() {
    local d
    d=$(unpack libzstd)
    cmake_build "$d/build/cmake" -DZSTD_BUILD_PROGRAMS=OFF -DZSTD_BUILD_TESTS=OFF \
        -DZSTD_BUILD_CONTRIB=OFF -DZSTD_BUILD_SHARED=ON -DZSTD_BUILD_STATIC=ON
}
build_brotli() {
    local d
    d=$(unpack brotli)
    # The brotli command-line program is always built (one file) and installed: removed.
    cmake_build "$d" -DBROTLI_DISABLE_TESTS=ON
    rm -f "$prefix/bin/brotli.exe"
}
build_catch2() {
    local d
    d=$(unpack catch2)
    # Catch2 2.x (tests/CMakeLists.txt asks for 2.13, which Debian 12 ships): header-only.
    cmake_build "$d" -DCATCH_BUILD_TESTING=OFF -DCATCH_INSTALL_DOCS=OFF -DCATCH_INSTALL_HELPERS=OFF \
        -DCATCH_BUILD_EXAMPLES=OFF -DCATCH_BUILD_EXTRA_TESTS=OFF
}
build_nghttp2() {
    local d b
    d=$(unpack nghttp2)
    b="$d/build-mingw"
    # The library only (not libtern's: tern::testing's HTTP/2 client and the tests' HPACK
    # oracle): its target alone is built and lib/'s install rules alone run (the DLL
    # libnghttp2.dll, its import library, the headers and libnghttp2.pc), so none of the
    # apps, examples, documentation or scripts. A DLL, as Debian's libnghttp2-14: a static
    # nghttp2 on Windows asks its consumers for -DNGHTTP2_STATICLIB, which libnghttp2.pc
    # does not give. HAVE_CLOCK_GETTIME=0: mingw-w64 has both clock_gettime (winpthreads)
    # and GetTickCount64, and 1.52's lib/nghttp2_time.c then calls a fallback it compiled out
    # only when GetTickCount64 is there (undefined reference to time_now_sec); without the
    # first it takes GetTickCount64, Windows's own clock.
    nice cmake -S "$d" -B "$b" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
        -DENABLE_LIB_ONLY=ON -DENABLE_SHARED_LIB=ON -DENABLE_STATIC_LIB=OFF -DENABLE_DOC=OFF \
        -DENABLE_FAILMALLOC=OFF -DENABLE_HTTP3=OFF -DHAVE_CLOCK_GETTIME=0 >&2
    nice cmake --build "$b" -j "$jobs" --target nghttp2 >&2
    cmake --install "$b/lib" >&2
}
build_openssl() {
    local d
    d=$(unpack openssl)
    # The libraries only (build_libs: no apps, tests, engines, modules or docs); both static
    # archives and DLLs (libcrypto-3-x64.dll, libssl-3-x64.dll), since libtern loads libssl
    # and libcrypto at run time (src/openssl/library.cpp).
    (
        cd "$d"
        nice ./Configure mingw64 --cross-compile-prefix=x86_64-w64-mingw32- CC=gcc-posix CXX=g++-posix \
            --prefix="$prefix" --libdir=lib no-tests shared >&2
        nice make -j "$jobs" build_libs >&2
        make install_dev >&2
    )
}

# The toolchain's own runtime DLLs (C++ library, libgcc, winpthread) beside the others, so
# that one directory next to an executable or on WINEPATH holds every DLL a program needs.
copy_runtime() {
    local dll f
    for dll in libstdc++-6.dll libgcc_s_seh-1.dll libwinpthread-1.dll; do
        f=$(x86_64-w64-mingw32-g++-posix -print-file-name="$dll")
        [ -f "$f" ] || { log "the toolchain has no $dll"; exit 1; }
        # Without their debug information: libstdc++-6.dll goes from 23 MB to about 2 MB.
        x86_64-w64-mingw32-strip --strip-debug -o "$prefix/bin/$dll" "$f"
    done
}
copy_runtime

# The CPU seconds (user + system) of this shell's finished children so far: on a shared
# machine a build's wall time says more about the neighbours than about the build.
children_cpu() {
    local stat
    read -r -a stat <"/proc/$$/stat"
    # Fields 16 and 17 (cutime, cstime) in clock ticks; the command name (field 2) has no
    # space here.
    echo $(((stat[15] + stat[16]) / $(getconf CLK_TCK)))
}

total_start=$(date +%s)
for name in "${order[@]}"; do
    if [ -f "$stamps/$name" ]; then
        continue
    fi
    log "building $name (${package_of[$name]} ${version[${package_of[$name]}]}, ${suite_of[${package_of[$name]}]})"
    start=$(date +%s)
    cpu_start=$(children_cpu)
    mkdir -p "$work"
    "build_$name"
    rm -rf "${work:?}/${package_of[$name]}"
    seconds=$(($(date +%s) - start))
    cpu=$(($(children_cpu) - cpu_start))
    log "built $name in ${seconds} s (${cpu} s of CPU)"
    echo "$seconds s, $cpu s of CPU" >"$stamps/$name"
    grep -qx "$name" "$prefix/READY" || echo "$name" >>"$prefix/READY"
done
rm -rf "${work:?}"
log "prefix ready in $(($(date +%s) - total_start)) s: $prefix"
echo "$prefix"
