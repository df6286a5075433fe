#!/usr/bin/env bash
# Starts (or stops) a one-node Slurm cluster for the sweep's Slurm test: munged, slurmctld
# and slurmd from Debian's packages (slurmctld slurmd slurm-client munge), run as plain
# daemons with their state under DIR, no systemd. Prints `export SLURM_CONF=...` on success.
#
#   tests/slurm/cluster.sh start DIR      # needs root (munged and slurmd do)
#   tests/slurm/cluster.sh stop DIR
set -euo pipefail
cmd=${1:?start|stop}
dir=$(mkdir -p "${2:?DIR}" && cd "$2" && pwd)
conf=$dir/slurm.conf
if [ "$cmd" = stop ]; then
  for p in slurmd slurmctld; do
    [ -f "$dir/$p.pid" ] && kill "$(cat "$dir/$p.pid")" 2>/dev/null || true
  done
  [ -f "$dir/munged.pid" ] && kill "$(cat "$dir/munged.pid")" 2>/dev/null || true
  exit 0
fi
for b in munged slurmctld slurmd sbatch sinfo; do
  command -v "$b" >/dev/null || { echo "cluster.sh: $b not installed" >&2; exit 3; }
done
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
# munge: a key of this cluster's own, a socket under DIR.
if [ ! -f "$dir/munge/munge.key" ]; then
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 600 "$dir/munge/munge.key"
fi
sock=$dir/munge/munge.socket
chmod 700 "$dir/munge"
munged --force --key-file="$dir/munge/munge.key" --socket="$sock" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed"
host=$(hostname -s)
node=$(slurmd -C | head -1 | sed -e 's/ UpTime=.*//')
cat > "$conf" <<CONF
ClusterName=paverci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldPort=16817
SlurmdPort=16818
$node State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$conf
slurmctld -f "$conf"
slurmd -f "$conf"
for _ in $(seq 1 30); do
  if sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    echo "export SLURM_CONF=$conf"
    exit 0
  fi
  sleep 1
done
echo "cluster.sh: the node did not become idle; see $dir/*.log" >&2
sinfo >&2 || true
exit 4
