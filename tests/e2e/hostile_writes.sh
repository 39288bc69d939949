#!/usr/bin/env bash
# Hostile filesystem input and output targets (issue 17): -o never replaces a FIFO, a device, a
# socket or a directory, writes through a symlink, follows the umask, and leaves no temporary file
# or compiler behind when lathe gets SIGTERM or SIGINT; what a killed run left is swept; -o "" is a
# usage error; inputs that are loops, FIFOs, devices or unreadable exit 2 naming the path and why,
# and one bad rank file of a folder is a diagnostic while the other ranks load.
# usage: hostile_writes.sh LATHE SAMPLES_DIR SOURCE_DIR
# The export parts need nvcc (skipped with a message without one); the plan write cut by a signal
# needs strace (to hold lathe inside the write); a folder of mode 000 is tested only where it cannot
# be read (not as root, who reads anything: root gets a FIFO, a dangling symlink and loops instead).
set -uo pipefail
lathe=$1 samples=$2
tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp" 2> /dev/null; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

log=$samples/captures/llama3_8b_2l_tiny_train.log.gz
ranks=$samples/tlparse/multi_rank_logs

# expect CODE WHAT PATTERN -- COMMAND...: the exit code, and stderr naming PATTERN. Run under a
# timeout: a FIFO that blocked lathe would hang here.
expect() {
  local want=$1 what=$2 pattern=$3; shift 4
  timeout 60 "$@" > "$tmp/out" 2> "$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then fail "$what: exit $got, expected $want: $(head -c 300 "$tmp/err")"
  elif ! grep -qF -- "$pattern" "$tmp/err"; then fail "$what: the message does not name '$pattern': $(head -c 300 "$tmp/err")"
  else ok "$what: exit $want"; fi
}

# No temporary file or folder of ours in the folder.
no_temps() {  # no_temps FOLDER WHAT
  local left
  left=$(ls -A "$1" | grep -E '\.tmp[0-9]+-|\.old[0-9]+-|\.lock$')
  if [ -n "$left" ]; then fail "$2: left $(echo "$left" | tr '\n' ' ')"; else ok "$2: no temporary left"; fi
}

# --- -o "" ----------------------------------------------------------------------------------------
expect 1 'plan -o ""' "--output" -- "$lathe" plan "$log" -o ""
expect 1 'plan --output ""' "--output" -- "$lathe" plan "$log" --output ""
expect 1 'export -o ""' "--output" -- "$lathe" export "$tmp/none.json" -o ""

# --- -o onto what is not a regular file -----------------------------------------------------------
mkdir "$tmp/targets"
mkfifo "$tmp/targets/fifo"
mkdir "$tmp/targets/folder"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/targets/socket"
expect 2 "plan -o FIFO" "$tmp/targets/fifo: cannot write: it is a FIFO" -- "$lathe" plan "$log" -o "$tmp/targets/fifo"
[ -p "$tmp/targets/fifo" ] && ok "the FIFO is untouched" || fail "the FIFO was replaced"
expect 2 "plan -o socket" "it is a socket" -- "$lathe" plan "$log" -o "$tmp/targets/socket"
[ -S "$tmp/targets/socket" ] && ok "the socket is untouched" || fail "the socket was replaced"
expect 2 "plan -o directory" "it is a directory" -- "$lathe" plan "$log" -o "$tmp/targets/folder"
[ -d "$tmp/targets/folder" ] && [ -z "$(ls -A "$tmp/targets/folder")" ] && ok "the directory is untouched" ||
  fail "the directory was written into or replaced"
if mknod "$tmp/targets/null" c 1 3 2> /dev/null; then
  expect 2 "plan -o character device" "it is a character device" -- "$lathe" plan "$log" -o "$tmp/targets/null"
  [ -c "$tmp/targets/null" ] && ok "the device is untouched" || fail "the device was replaced"
else
  echo "skip -o onto a character device: mknod needs root (CI runs as root)"
fi
no_temps "$tmp/targets" "refused targets"

# --- -o through a symlink -------------------------------------------------------------------------
mkdir "$tmp/real"
ln -s real/plan.json "$tmp/link.json"
ln -s "$tmp/link.json" "$tmp/link-to-link.json"
if "$lathe" plan "$log" -o "$tmp/link-to-link.json" > /dev/null 2> "$tmp/err" && [ -L "$tmp/link.json" ] &&
   [ -L "$tmp/link-to-link.json" ] && [ -f "$tmp/real/plan.json" ] &&
   python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/real/plan.json"; then
  ok "-o through a symlink writes its target and keeps the symlinks"
else
  fail "-o through a symlink: $(head -c 300 "$tmp/err"); $(ls -la "$tmp" | tr '\n' ' ')"
fi
no_temps "$tmp/real" "write through a symlink"

# --- a killed run's temporaries are swept by the next write; others' are not touched ---------------
mkdir "$tmp/sweep"
dead=$(sh -c 'echo $$')  # a process that has exited
stale=(".plan.json.tmp$dead-abc123" ".plan.json.tmp$$-Old999")
kept=(".plan.json.tmp$$-fresh1" ".plan.json.tmp$dead-notours" ".other.json.tmp$dead-abc123" "notes.txt")
for name in "${stale[@]}" "${kept[@]}"; do echo debris > "$tmp/sweep/$name"; done
touch -d '2 hours ago' "$tmp/sweep/.plan.json.tmp$$-Old999"  # alive pid, but too old: reused
"$lathe" plan "$log" -o "$tmp/sweep/plan.json" > /dev/null 2> "$tmp/err" || fail "plan into sweep/: $(head -c 300 "$tmp/err")"
left=$(ls -A "$tmp/sweep" | sort | tr '\n' ' ')
want=$(printf '%s\n' "${kept[@]}" plan.json | sort | tr '\n' ' ')
[ "$left" = "$want" ] && ok "stale temporaries swept, the others kept" || fail "after the sweep: $left (expected $want)"

# --- SIGTERM / SIGINT while the plan is written -----------------------------------------------------
# strace holds lathe in the fsync of its temporary file, so that the signal lands inside the write.
start_unignoring_sigint() {  # a background job ignores SIGINT; lathe must see it as a terminal sends it
  python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' "$@" &
}
if command -v strace > /dev/null; then
  for signal in TERM INT; do
    mkdir "$tmp/cut-$signal"
    start_unignoring_sigint strace -f -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=5000000 \
      "$lathe" plan "$log" -o "$tmp/cut-$signal/plan.json"
    tracer=$!
    for _ in $(seq 1 300); do ls -A "$tmp/cut-$signal" | grep -q '^\.plan\.json\.tmp' && break; sleep 0.1; done
    if ! ls -A "$tmp/cut-$signal" | grep -q '^\.plan\.json\.tmp'; then
      fail "SIG$signal during a plan write: lathe never started writing"
      kill "$tracer" 2> /dev/null
      wait "$tracer"
      continue
    fi
    kill -"$signal" "$(pgrep -P "$tracer")"
    wait "$tracer"
    rc=$?
    if [ "$rc" -ne $((128 + $(kill -l "$signal"))) ]; then fail "SIG$signal during a plan write: exit $rc"; fi
    [ -e "$tmp/cut-$signal/plan.json" ] && fail "SIG$signal during a plan write: the plan was written anyway"
    no_temps "$tmp/cut-$signal" "SIG$signal during a plan write"
  done
  # SIGKILL cannot be caught: its temporary stays, and the next write to the plan sweeps it.
  mkdir "$tmp/cut-KILL"
  strace -f -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=5000000 \
    "$lathe" plan "$log" -o "$tmp/cut-KILL/plan.json" > /dev/null 2>&1 &
  tracer=$!
  for _ in $(seq 1 300); do ls -A "$tmp/cut-KILL" | grep -q '^\.plan\.json\.tmp' && break; sleep 0.1; done
  kill -KILL "$(pgrep -P "$tracer")"
  wait "$tracer" 2> /dev/null  # "Killed" is what this part expects
  if ls -A "$tmp/cut-KILL" | grep -q '^\.plan\.json\.tmp'; then
    "$lathe" plan "$log" -o "$tmp/cut-KILL/plan.json" > /dev/null 2> "$tmp/err" || fail "plan after SIGKILL: $(head -c 300 "$tmp/err")"
    [ "$(ls -A "$tmp/cut-KILL")" = plan.json ] && ok "the temporary of a SIGKILLed plan write is swept by the next" ||
      fail "after a SIGKILLed plan write and another: $(ls -A "$tmp/cut-KILL" | tr '\n' ' ')"
  else
    fail "SIGKILL during a plan write: no temporary seen"
  fi
else
  echo "skip SIGTERM / SIGINT inside a plan write: no strace to hold lathe there"
fi

# --- input: loops, FIFOs, devices, dangling symlinks, unreadable folders -----------------------------
mkdir "$tmp/in" "$tmp/in/loops"
ln -s loop-b "$tmp/in/loops/loop-a"
ln -s loop-a "$tmp/in/loops/loop-b"
ln -s self "$tmp/in/loops/self"
mkfifo "$tmp/in/fifo"
ln -s nowhere "$tmp/in/dangling"
for command in info graphs; do
  expect 2 "$command on a folder of symlink loops" "$tmp/in/loops/loop-a: Too many levels of symbolic links" -- \
    "$lathe" "$command" "$tmp/in/loops"
  expect 2 "$command on a symlink loop" "$tmp/in/loops/self: cannot open: Too many levels of symbolic links" -- \
    "$lathe" "$command" "$tmp/in/loops/self"
done
expect 2 "info on a FIFO (never opened)" "$tmp/in/fifo: cannot open: it is a FIFO" -- "$lathe" info "$tmp/in/fifo"
expect 2 "info on a dangling symlink" "$tmp/in/dangling: cannot open: No such file or directory" -- "$lathe" info "$tmp/in/dangling"
expect 2 "info on /dev/zero (never read)" "/dev/zero: cannot open: it is a character device" -- "$lathe" info /dev/zero
expect 2 "plan --ops FIFO" "$tmp/in/fifo: cannot open: it is a FIFO" -- "$lathe" plan "$log" --ops "$tmp/in/fifo"
expect 2 "timeline on a FIFO" "$tmp/in/fifo: cannot open: it is a FIFO" -- "$lathe" timeline "$tmp/in/fifo"
# Permissions bind users other than root: run as root, these run lathe as nobody (setpriv).
unprivileged=()
if [ "$(id -u)" -eq 0 ]; then
  unprivileged=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  "${unprivileged[@]}" "$lathe" --version > /dev/null 2>&1 || unprivileged=(none)
fi
if [ "${unprivileged[0]:-}" != none ]; then
  chmod 755 "$tmp"
  mkdir -m 755 "$tmp/perm" "$tmp/perm/closed" "$tmp/perm/ranks" "$tmp/perm/read-only"
  cp "$ranks"/dedicated_log_torch_trace_rank_*.log "$tmp/perm/ranks/"
  cp "$ranks/dedicated_log_torch_trace_rank_0.log" "$tmp/perm/closed/"
  chmod -R a+r "$tmp/perm"
  chmod 000 "$tmp/perm/closed" "$tmp/perm/ranks/dedicated_log_torch_trace_rank_2.log"
  chmod 555 "$tmp/perm/read-only"
  expect 2 "info on a folder of mode 000" "$tmp/perm/closed: cannot list the folder: Permission denied" -- \
    "${unprivileged[@]}" "$lathe" info "$tmp/perm/closed"
  expect 2 "info on a file of mode 000" "rank_2.log: cannot open: Permission denied" -- \
    "${unprivileged[@]}" "$lathe" info "$tmp/perm/ranks/dedicated_log_torch_trace_rank_2.log"
  if "${unprivileged[@]}" "$lathe" info --diagnostics "$tmp/perm/ranks" > "$tmp/out" 2>&1 &&
     grep -q "rank_2.log: error: rank log not loaded: cannot open: Permission denied" "$tmp/out" &&
     grep -q "^compile .* rank 3 " "$tmp/out"; then
    ok "a folder of ranks, one of mode 000: the others load, a diagnostic names it"
  else
    fail "a folder of ranks, one of mode 000: $(grep -E 'rank_2|lathe:' "$tmp/out" | head -3)"
  fi
  expect 2 "plan -o into a read-only folder" "$tmp/perm/read-only/plan.json: cannot write: Permission denied" -- \
    "${unprivileged[@]}" "$lathe" plan "$log" -o "$tmp/perm/read-only/plan.json"
else
  echo "skip files and folders of mode 000: root reads anything, and lathe cannot run as nobody here"
fi

# A folder of ranks with bad rank files: the others load, a diagnostic names each bad one.
mkdir "$tmp/in/ranks"
cp "$ranks"/dedicated_log_torch_trace_rank_*.log "$tmp/in/ranks/"
ln -s nowhere "$tmp/in/ranks/dedicated_log_torch_trace_rank_7.log"
mkfifo "$tmp/in/ranks/dedicated_log_torch_trace_rank_8.log"
ln -s dedicated_log_torch_trace_rank_9.log "$tmp/in/ranks/dedicated_log_torch_trace_rank_9.log"
good=$(ls "$ranks" | grep -c '^dedicated_log_torch_trace_rank_')
if timeout 60 "$lathe" info --json "$tmp/in/ranks" > "$tmp/out" 2> "$tmp/err" &&
   python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["files"]) == int(sys.argv[2]), d["files"]; assert d["diagnostics"]["errors"] == 3, d["diagnostics"]' "$tmp/out" "$good" &&
   timeout 60 "$lathe" info --diagnostics "$tmp/in/ranks" > "$tmp/out" 2>&1 &&
   grep -q "rank_7.log: error: rank log not loaded: No such file or directory" "$tmp/out" &&
   grep -q "rank_8.log: error: rank log not loaded: it is a FIFO" "$tmp/out" &&
   grep -q "rank_9.log: error: rank log not loaded: Too many levels of symbolic links" "$tmp/out"; then
  ok "bad rank files: the $good others load, a diagnostic names each bad one"
else
  fail "bad rank files: $(head -c 300 "$tmp/err") $(grep rank_ "$tmp/out" | head -3)"
fi
mkdir "$tmp/in/no-good-ranks"
ln -s nowhere "$tmp/in/no-good-ranks/dedicated_log_torch_trace_rank_0.log"
expect 2 "a folder whose only rank file is dangling" "no-good-ranks/dedicated_log_torch_trace_rank_0.log: No such file or directory" -- \
  "$lathe" graphs "$tmp/in/no-good-ranks"

# --- export: umask, refused targets, SIGTERM / SIGINT during the compile --------------------------
if ! command -v nvcc > /dev/null && [ ! -x "${CUDA_HOME:-/nonexistent}/bin/nvcc" ] && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "skip the export parts: no CUDA toolkit (nvcc)"
  [ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
  exit 0
fi
mkdir "$tmp/export"
plan=$tmp/export/plan.json
"$lathe" plan "$log" -o "$plan" > /dev/null 2> "$tmp/err" || fail "plan for the exports: $(head -c 300 "$tmp/err")"
for mask in 022 077; do
  want=$(printf '%o' $((0777 & ~8#$mask)))
  if (umask "$mask" && "$lathe" export "$plan" -o "$tmp/export/bundle-$mask" --targets sm_90a > /dev/null 2> "$tmp/err"); then
    got=$(stat -c %a "$tmp/export/bundle-$mask") src=$(stat -c %a "$tmp/export/bundle-$mask/src")
    [ "$got" = "$want" ] && [ "$src" = "$want" ] && ok "export under umask $mask: mode $got" ||
      fail "export under umask $mask: mode $got (src $src), expected $want"
  else
    fail "export under umask $mask: $(head -c 300 "$tmp/err")"
  fi
done
expect 2 "export -o FIFO" "$tmp/targets/fifo: cannot write: it is a FIFO" -- \
  "$lathe" export "$plan" -o "$tmp/targets/fifo" --targets sm_90a
[ -p "$tmp/targets/fifo" ] && ok "the FIFO is untouched by export" || fail "export replaced the FIFO"
no_temps "$tmp/targets" "refused export targets"

for signal in TERM INT; do
  cp "$plan" "$tmp/export/before.json"
  start_unignoring_sigint "$lathe" export "$plan" -o "$tmp/export/cut-$signal" --targets sm_90a,sm_120
  exporter=$!
  for _ in $(seq 1 600); do pgrep -f "$tmp/export/.cut-$signal.tmp" > /dev/null && break; sleep 0.1; done
  if ! pgrep -f "$tmp/export/.cut-$signal.tmp" > /dev/null; then
    fail "SIG$signal during an export: no compiler seen running"
    kill "$exporter" 2> /dev/null
    wait "$exporter"
    continue
  fi
  kill -"$signal" "$exporter"
  wait "$exporter"
  rc=$?
  [ "$rc" -eq $((128 + $(kill -l "$signal"))) ] || fail "SIG$signal during an export: exit $rc"
  sleep 0.5
  orphans=$(pgrep -f "$tmp/export/.cut-$signal" | tr '\n' ' ')
  [ -z "$orphans" ] && ok "SIG$signal during an export: no compiler left running" ||
    fail "SIG$signal during an export: compilers left running: $orphans"
  [ -e "$tmp/export/cut-$signal" ] && fail "SIG$signal during an export: the bundle was installed"
  cmp -s "$plan" "$tmp/export/before.json" && ok "SIG$signal during an export: the plan is unchanged" ||
    fail "SIG$signal during an export: the plan changed"
  rm "$tmp/export/before.json"
  no_temps "$tmp/export" "SIG$signal during an export"
done

# SIGKILL cannot be caught: the temporary folder stays (its compilers finish on their own), and the
# next export into the folder sweeps it.
start_unignoring_sigint "$lathe" export "$plan" -o "$tmp/export/killed" --targets sm_90a
exporter=$!
for _ in $(seq 1 600); do pgrep -f "$tmp/export/.killed.tmp" > /dev/null && break; sleep 0.1; done
kill -KILL "$exporter"
wait "$exporter" 2> /dev/null  # "Killed" is what this part expects
for _ in $(seq 1 600); do pgrep -f "$tmp/export/.killed.tmp" > /dev/null || break; sleep 0.1; done
if ls -A "$tmp/export" | grep -q '^\.killed\.tmp[0-9]*-'; then
  if "$lathe" export "$plan" -o "$tmp/export/killed" --targets sm_90a > /dev/null 2> "$tmp/err"; then
    no_temps "$tmp/export" "the export after a SIGKILLed one"
  else
    fail "export after a SIGKILLed one: $(head -c 300 "$tmp/err")"
  fi
else
  fail "SIGKILL during an export: no temporary folder seen"
fi

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
