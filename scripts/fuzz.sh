#!/usr/bin/env bash
# Builds the libFuzzer targets of server/fuzz into build/fuzz (clang, ASan + UBSan) and runs each
# for SECONDS_PER_TARGET (default 10: a smoke run), two at a time, from its committed seed corpus
# (server/fuzz/corpus/<target>) plus what earlier runs found (build/fuzz/corpus/<target>).
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     e.g. scripts/fuzz.sh 600 shard
# A crash, leak, timeout or failed property check fails the script; the input that caused it is
# kept as build/fuzz/crashes/<target>-<kind>-<sha1> and printed with the fuzzer's report. Replay
# one with: build/fuzz/server/fuzz/fuzz_<target> <that file>. See docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
# The smoke run (test.sh) explores the same inputs first on every machine, so a red CI run is a
# reproducible one; long runs take a fresh seed each time (FUZZ_SEED=0: libFuzzer picks).
seed=${FUZZ_SEED:-$([ "$secs" -le 60 ] && echo 1 || echo 0)}
shift $(($# > 0 ? 1 : 0))
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(http_request byte_range list_objects_msg moss_request bucket_props object_selection ais_messages
           object_meta header_snapshot inventory_index inventory_chunk tar_scanner shard aws_chunked s3_xml)
fi

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (scripts/setup.sh --test installs it)" >&2; exit 1; }
cmake -S . -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DAIS_FUZZ=ON -DAIS_WERROR=ON -DAIS_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE= >/dev/null
cmake --build build/fuzz --target "${targets[@]/#/fuzz_}" -j "$(nproc)" -- --quiet

root=$PWD
mkdir -p build/fuzz/crashes build/fuzz/logs
# The shard target keeps a Store on a temporary directory: tmpfs when there is one.
if [ -z "${TMPDIR:-}" ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
export UBSAN_OPTIONS=print_stacktrace=1

run() {
  local t=$1
  mkdir -p "build/fuzz/corpus/$t"
  # New inputs go to the first directory; the committed seeds stay as they are.
  "$root/build/fuzz/server/fuzz/fuzz_$t" -max_total_time="$secs" -seed="$seed" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$root/build/fuzz/crashes/$t-" \
    "build/fuzz/corpus/$t" "server/fuzz/corpus/$t" >"build/fuzz/logs/$t.log" 2>&1
}

echo "==> fuzzing ${#targets[@]} targets, ${secs}s each, 2 at a time"
declare -A pids=()
failed=()
report() {
  local t=$1 rc=$2 log="build/fuzz/logs/$1.log"
  local units execs
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  if [ "$rc" = 0 ]; then
    printf '  %-18s ok    %9s runs  %7s exec/s\n' "$t" "${units:-?}" "${execs:-?}"
  else
    printf '  %-18s FAILED (exit %s)\n' "$t" "$rc"
    grep -E "ERROR|FUZZ_CHECK|runtime error|SUMMARY|Test unit written|^    #[0-9] " "$log" | head -n 30 | sed 's/^/    /'
    failed+=("$t")
  fi
}
next=0
while ((next < ${#targets[@]})) || ((${#pids[@]} > 0)); do
  while ((next < ${#targets[@]})) && ((${#pids[@]} < 2)); do
    run "${targets[next]}" &
    pids[$!]=${targets[next]}
    next=$((next + 1))
  done
  rc=0
  wait -n -p done_pid "${!pids[@]}" || rc=$?
  report "${pids[$done_pid]}" "$rc"
  unset "pids[$done_pid]"
done

if ((${#failed[@]})); then
  echo "fuzz: ${failed[*]} failed; inputs in build/fuzz/crashes/, logs in build/fuzz/logs/" >&2
  exit 1
fi
