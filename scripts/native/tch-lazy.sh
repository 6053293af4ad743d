#!/usr/bin/env bash
# Builds tch's C API (torch-sys's libtch/*.cpp, from the cargo registry) as a shared library
# of its own, and an archive of stubs with the same function names for tch to link instead
# of libtorch (.cargo/config.toml overrides torch-sys's build script with it). The first
# call through any stub loads the library (tch_lazy.c); until then libtorch is not mapped.
#
#   tch-lazy.sh LIBTCH_SRC LIBTORCH OUT
# OUT receives libberyl_tch.so and libberyl_tch_lazy.a. x86-64 Linux only.
set -euo pipefail
src=$1 torch=$2 out=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

cxx=(g++ -O2 -fPIC -std=c++17 -D_GLIBCXX_USE_CXX11_ABI=1 -DGLOG_USE_GLOG_EXPORT -w
    -I"$torch/include" -I"$torch/include/torch/csrc/api/include")
"${cxx[@]}" -c "$src/torch_api.cpp" -o "$build/api.o" &
a=$!
"${cxx[@]}" -c "$src/torch_api_generated.cpp" -o "$build/generated.o" &
g=$!
wait $a
wait $g

# The C API: every plain-named function the objects define. The callbacks: the functions
# they call that tch defines in Rust (`tch_*`), which the library reaches through a table
# the loader fills.
nm --defined-only "$build/api.o" "$build/generated.o" | awk '$2 == "T" && $3 !~ /^_Z/ {print $3}' | sort -u >"$build/api"
nm --undefined-only "$build/api.o" "$build/generated.o" | awk '$1 == "U" && $2 ~ /^tch_/ {print $2}' | sort -u >"$build/callbacks"
[ -s "$build/api" ] || { echo "tch-lazy: no functions found in $src" >&2; exit 1; }

# In the library: each callback jumps through its entry of a table the loader fills.
awk 'BEGIN {
        print "\t.text"
        print "\t.globl beryl_tch_back_table"
        print "\t.type beryl_tch_back_table, @function"
        print "beryl_tch_back_table:"
        print "\tlea back(%rip), %rax"
        print "\tret"
    }
    {
        printf "\t.globl %s\n\t.type %s, @function\n%s:\n\tjmp *back+%d(%%rip)\n", $1, $1, $1, 8 * (NR - 1)
    }
    END {
        print "\t.bss"
        print "\t.p2align 3"
        printf "back:\n\t.zero %d\n", 8 * (NR > 0 ? NR : 1)
        print "\t.section .note.GNU-stack,\"\",@progbits"
    }' "$build/callbacks" >"$build/back.S"

# In the program: each function jumps through its slot; a slot first holds a lazy entry
# that saves the argument registers, loads the library and goes on to the function.
awk -v callbacks="$build/callbacks" 'BEGIN { print "\t.text" }
    {
        name[NR - 1] = $1
        printf "\t.p2align 4\n\t.globl %s\n\t.type %s, @function\n%s:\n\tjmp *beryl_tch_slots+%d(%%rip)\n", $1, $1, $1, 8 * (NR - 1)
        printf "lazy_%d:\n\tmov $%d, %%r11d\n\tjmp enter\n", NR - 1, NR - 1
    }
    END {
        n = NR
        print "\t.p2align 4"
        print "enter:"
        # Entered by a jump from a call: %rsp is 8 past a 16-byte boundary. Eight pushes
        # and 136 bytes of xmm space bring it to one, as the call below needs.
        split("rdi rsi rdx rcx r8 r9 rax r11", regs, " ")
        for (i = 1; i <= 8; i++) printf "\tpush %%%s\n", regs[i]
        print "\tsub $136, %rsp"
        for (i = 0; i < 8; i++) printf "\tmovdqu %%xmm%d, %d(%%rsp)\n", i, 16 * i
        print "\tcall beryl_tch_load@PLT"
        for (i = 0; i < 8; i++) printf "\tmovdqu %d(%%rsp), %%xmm%d\n", 16 * i, i
        print "\tadd $136, %rsp"
        for (i = 8; i >= 1; i--) printf "\tpop %%%s\n", regs[i]
        print "\tlea beryl_tch_slots(%rip), %r10"
        print "\tjmp *(%r10,%r11,8)"
        print "\t.data"
        print "\t.p2align 3"
        print "\t.globl beryl_tch_slots"
        print "\t.hidden beryl_tch_slots"
        print "beryl_tch_slots:"
        for (i = 0; i < n; i++) printf "\t.quad lazy_%d\n", i
        print "\t.section .data.rel.ro, \"aw\""
        print "\t.p2align 3"
        print "\t.globl beryl_tch_names"
        print "\t.hidden beryl_tch_names"
        print "beryl_tch_names:"
        for (i = 0; i < n; i++) printf "\t.quad name_%d\n", i
        print "\t.globl beryl_tch_callbacks"
        print "\t.hidden beryl_tch_callbacks"
        print "beryl_tch_callbacks:"
        m = 0
        while ((getline cb < callbacks) > 0) { printf "\t.quad %s\n", cb; m++ }
        if (m == 0) print "\t.quad 0"
        print "\t.section .rodata"
        print "\t.p2align 2"
        print "\t.globl beryl_tch_count"
        print "\t.hidden beryl_tch_count"
        printf "beryl_tch_count:\n\t.long %d\n", n
        print "\t.globl beryl_tch_callback_count"
        print "\t.hidden beryl_tch_callback_count"
        printf "beryl_tch_callback_count:\n\t.long %d\n", m
        for (i = 0; i < n; i++) printf "name_%d:\n\t.asciz \"%s\"\n", i, name[i]
        print "\t.section .note.GNU-stack,\"\",@progbits"
    }' "$build/api" >"$build/stubs.S"

g++ -shared -o "$build/libberyl_tch.so" "$build/api.o" "$build/generated.o" "$build/back.S" \
    -Wl,-soname,libberyl_tch.so -Wl,-z,defs -Wl,-rpath,"$torch/lib" -L"$torch/lib" \
    -Wl,--no-as-needed -ltorch_cpu -lc10
gcc -c "$build/stubs.S" -o "$build/stubs.o"
gcc -O2 -fPIC -DBERYL_TCH_LIB="\"$out/libberyl_tch.so\"" -c "$here/tch_lazy.c" -o "$build/load.o"
ar rcs "$build/libberyl_tch_lazy.a" "$build/stubs.o" "$build/load.o"

mkdir -p "$out"
install -m 0644 "$build/libberyl_tch.so" "$build/libberyl_tch_lazy.a" "$out/"
echo "tch-lazy: $(wc -l <"$build/api") functions, $(wc -l <"$build/callbacks") callbacks, in $out" >&2
