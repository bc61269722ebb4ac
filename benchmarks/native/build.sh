#!/usr/bin/env bash
# Builds dbcppp-decode against a dbcppp 3.x source tree, and with WITH_CLI=1 dbcppp's own tool.
#
#   DBCPPP_SRC=DIR [BUILD_DIR=DIR] [WITH_CLI=1] [CXX=g++] build.sh
#
# dbcppp is configured with CMake as a Release build (-O3 -DNDEBUG), without KCD support, tests or
# examples (none of them decode DBC frames); the harness is compiled with -O3 -DNDEBUG and linked
# to the libdbcppp.so just built. Results: BUILD_DIR/dbcppp-decode and BUILD_DIR/dbcppp
# (BUILD_DIR defaults to DBCPPP_SRC/build-native). Needs cmake, a C++17 compiler and Boost's
# headers (Debian: cmake g++ libboost-dev); the tool also needs cxxopts (libcxxopts-dev).
set -euo pipefail

src=$(realpath "${DBCPPP_SRC:?set DBCPPP_SRC to a dbcppp 3.x source tree}")
build=${BUILD_DIR:-$src/build-native}
mkdir -p "$build"
build=$(realpath "$build")
here=$(cd "$(dirname "$0")" && pwd)
cxx=${CXX:-g++}
flags=(-std=c++17 -O3 -DNDEBUG)

[[ -f $src/include/dbcppp/Network.h ]] || { echo "build.sh: $src has no include/dbcppp/Network.h" >&2; exit 1; }

lib=$build/libdbcppp
cmake -S "$src" -B "$lib" -DCMAKE_BUILD_TYPE=Release \
    -Dbuild_kcd=OFF -Dbuild_tools=OFF -Dbuild_tests=OFF -Dbuild_examples=OFF > "$build/cmake.log" 2>&1 ||
    { cat "$build/cmake.log" >&2; exit 1; }
cmake --build "$lib" -j "$(nproc)" > "$build/make.log" 2>&1 || { cat "$build/make.log" >&2; exit 1; }

"$cxx" "${flags[@]}" -I"$src/include" "$here/dbcppp_decode.cpp" -o "$build/dbcppp-decode" \
    -L"$lib" -ldbcppp -Wl,-rpath,"$lib"
echo "built $build/dbcppp-decode"

if [[ -n ${WITH_CLI:-} ]]; then
    main=$src/tools/dbcppp/main.cpp
    [[ -f $main ]] || { echo "build.sh: no $main" >&2; exit 1; }
    extra=()
    [[ -d $src/third-party/cxxopts/include ]] && extra+=(-I"$src/third-party/cxxopts/include")
    # Without src/Network2*.cpp the library lacks the dbc2 converters; stand-ins take their place.
    if ! nm -DC "$lib/libdbcppp.so" | grep -q 'Network2Human::operator<<'; then
        extra+=("$here/cli_stubs.cpp")
        echo "note: libdbcppp has no Network2* converters; the tool's dbc2 subcommand is left out"
    fi
    "$cxx" "${flags[@]}" -I"$src/include" "$main" "${extra[@]}" -o "$build/dbcppp" \
        -L"$lib" -ldbcppp -Wl,-rpath,"$lib"
    echo "built $build/dbcppp"
fi
