#!/usr/bin/env bash
# `sharc run` under mpirun, end to end (registered with ctest by
# CMakeLists.txt here):
#   mpi_run_test.sh MODE SHARC SOURCE_DIR "MPIRUN [FLAGS]"
# MODE:
#   matches_in_process  examples and conformance modules run in-process and
#                       under mpirun -np 2 and -np 4 must write byte-identical
#                       output .npy files (process 0 alone writes them)
#   different_programs  two processes started on different modules must both
#                       stop with an error naming the mismatch
#   killed_rank         a rank killed with SIGKILL mid-run must make the job
#                       end with an error, well within the timeout
#   killed_rank_sharc_detects
#                       the same with mpirun told not to end the job
#                       (--enable-recovery): the surviving rank's collective
#                       timeout must end it, naming the collective
set -uo pipefail
mode=$1
sharc=$2
src=$3
read -r -a mpirun <<<"$4"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# The kernels are the reference interpreter's: these tests are about moving
# data between processes, and the interpreter is the bit-exact reference.
run=(run --backend interpreter)
conf="$src/../shared/conformance/partition"

case "$mode" in
matches_in_process)
  cases=("$src/examples/constrained_mlp.hlo 4")
  for f in 04_dot_contracting_reduce_scatter 07_reshard_all_gather 08_reshard_all_to_all \
           10_reduce_over_sharded_dim 14_dot_2d_mesh_megatron; do
    [ -f "$conf/$f.hlo" ] && cases+=("$conf/$f.hlo 8")
  done
  [ -f "$conf/11_uneven_reduce_masking.hlo" ] && cases+=("$conf/11_uneven_reduce_masking.hlo 4")
  for c in "${cases[@]}"; do
    read -r file devices <<<"$c"
    name=$(basename "$file" .hlo)
    "$sharc" "${run[@]}" "$file" --devices "$devices" --random-inputs=3 --output-dir "$tmp/$name.ref" \
      >"$tmp/$name.ref.txt" 2>&1 || fail "in-process run of $name: $(cat "$tmp/$name.ref.txt")"
    for np in 2 4; do
      out="$tmp/$name.np$np"
      "${mpirun[@]}" -np "$np" "$sharc" "${run[@]}" "$file" --devices "$devices" --random-inputs=3 \
        --collective-timeout 30 --output-dir "$out" >"$out.txt" 2>&1 ||
        fail "mpirun -np $np run of $name: $(cat "$out.txt")"
      grep -q "running them on $np MPI processes" "$out.txt" || fail "$name np=$np did not use MPI"
      n=0
      for ref in "$tmp/$name.ref"/out*.npy; do
        cmp -s "$ref" "$out/$(basename "$ref")" || fail "$name np=$np: $(basename "$ref") differs"
        n=$((n + 1))
      done
      [ "$n" -gt 0 ] || fail "$name wrote no outputs"
      [ "$(ls "$out" | wc -l)" -eq "$n" ] || fail "$name np=$np wrote a different number of outputs"
      # Process 0 alone prints: one summary line per output.
      [ "$(grep -c '^out0 = ' "$out.txt")" -eq 1 ] || fail "$name np=$np: results printed more than once"
      echo "ok: $name on $devices devices, mpirun -np $np: $n output(s) identical to the in-process run"
    done
  done
  ;;
different_programs)
  a="$src/examples/constrained_mlp.hlo"
  b="$conf/11_uneven_reduce_masking.hlo"
  start=$SECONDS
  "${mpirun[@]}" -np 1 "$sharc" "${run[@]}" "$a" --devices 4 --random-inputs --collective-timeout 10 : \
    -np 1 "$sharc" "${run[@]}" "$b" --devices 4 --random-inputs --collective-timeout 10 >"$tmp/log" 2>&1
  rc=$?
  [ "$rc" -ne 0 ] || fail "different programs exited 0: $(cat "$tmp/log")"
  grep -q "the MPI processes run different programs" "$tmp/log" || fail "no mismatch message: $(cat "$tmp/log")"
  [ $((SECONDS - start)) -lt 30 ] || fail "took $((SECONDS - start))s"
  echo "ok: exit $rc after $((SECONDS - start))s: $(grep -m1 'different programs' "$tmp/log")"
  ;;
killed_rank | killed_rank_sharc_detects)
  # A loop of 10^8 all-reduces keeps the job busy long enough to kill a
  # rank in the middle. In killed_rank, mpirun itself ends the job when a
  # rank dies; killed_rank_sharc_detects turns that off (--enable-recovery),
  # so the surviving rank's own collective timeout must end it, naming what
  # it waited for.
  launcher_flags=()
  [ "$mode" = killed_rank_sharc_detects ] && launcher_flags=(--enable-recovery)
  cat >"$tmp/loop.hlo" <<'HLO'
HloModule loop, num_partitions=4

%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%cond {
  %state = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%state), index=0
  %n = s32[] constant(100000000)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body {
  %state = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%state), index=0
  %x = f32[4] get-tuple-element(%state), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %r = f32[4] all-reduce(%x), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%add
  %scale = f32[] constant(0.25)
  %scales = f32[4] broadcast(%scale), dimensions={}
  %y = f32[4] multiply(%r, %scales)
  ROOT %out = (s32[], f32[4]) tuple(%next, %y)
}

ENTRY %main {
  %x = f32[4] parameter(0), sharding={replicated}
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]) tuple(%zero, %x)
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body
  ROOT %res = f32[4] get-tuple-element(%w), index=1
}
HLO
  start=$SECONDS
  "${mpirun[@]}" "${launcher_flags[@]}" -np 2 "$sharc" "${run[@]}" "$tmp/loop.hlo" --devices 4 \
    --random-inputs --collective-timeout 3 >"$tmp/log" 2>&1 &
  launcher=$!
  # Wait until both ranks run, then kill the second one (children of
  # mpirun, which launches local ranks itself).
  ranks=()
  for _ in $(seq 100); do
    mapfile -t ranks < <(pgrep -P "$launcher")
    [ "${#ranks[@]}" -ge 2 ] && break
    sleep 0.1
  done
  [ "${#ranks[@]}" -ge 2 ] || { kill "$launcher"; fail "ranks did not start"; }
  sleep 1.5
  kill -0 "$launcher" 2>/dev/null || fail "the run ended before a rank could be killed: $(cat "$tmp/log")"
  kill -9 "${ranks[1]}"
  killed_at=$SECONDS
  for _ in $(seq 300); do
    kill -0 "$launcher" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$launcher" 2>/dev/null; then
    kill "$launcher"
    fail "the job still ran 30s after rank pid ${ranks[1]} was killed"
  fi
  wait "$launcher"
  rc=$?
  if [ "$mode" = killed_rank ]; then
    [ "$rc" -ne 0 ] || fail "the job exited 0 after a rank was killed: $(cat "$tmp/log")"
  else
    # (mpirun exits 0 under --enable-recovery; the survivor's error is the check.)
    grep -Eq "all-reduce %r .*(never arrived|did not finish within 3s)" "$tmp/log" ||
      fail "the surviving rank did not report the collective it waited for: $(cat "$tmp/log")"
  fi
  echo "ok: exit $rc $((SECONDS - killed_at))s after killing a rank; log:"
  cat "$tmp/log"
  ;;
*)
  fail "unknown mode '$mode'"
  ;;
esac
