#!/usr/bin/env bash
# tests/slurm/cluster.sh: a throw-away one-node Slurm for the tests
# (the recipe of SLURM.md §4, tested with Debian 12's slurm-wlm 22.05.8 and
# munge 0.5.15). Runs as root; needs no systemd, no cgroups, no GPU and no
# network but loopback. Everything lives in one mktemp directory under /tmp
# (and an empty cgroup mount point under /dev/shm).
#
#   ENV=$(tests/slurm/cluster.sh start) || exit 1  # not eval "$(...)": a failed
#   eval "$ENV"                                    # start would go unnoticed
#   trap 'tests/slurm/cluster.sh stop "$SLURMCI_DIR"' EXIT
#   srun -p a100 --gres=gpu:1 -t 1 --immediate=20 nvidia-smi
#
# start prints `export SLURM_CONF=... SLURMCI_DIR=...` and nothing else on
# stdout; it fails (status 1, the daemons' logs on stderr, nothing left
# behind) when a daemon dies or the node does not come up. The cluster:
#   node ci-gpu0 (slurmd -N: the config does not depend on `hostname`),
#   8 CPUs whatever the machine has, two fake GPUs (char devices 195:0 and
#   195:1 made with mknod under the directory: gres/gpu wants devices);
#   partitions a100, h100 and hang, all UP, all on that node, none the
#   default (every srun names one). What a GPU answers per partition is the
#   fake driver's business (tests/fakecuda, CUDA_BY_PARTITION).
#   Ports: SLURMCI_PORT_BASE (slurmctld; slurmd uses +1), else a pair
#   below the ephemeral range that nothing uses, retried if taken meanwhile,
#   so that two test runs at once do not clash.
#
# stop DIR cancels the jobs left, then ends the daemons by the PIDs recorded
# at start (each only while /proc/PID/cmdline still names DIR), SIGKILL for
# one that ignores SIGTERM for 10 s, and removes DIR and its /dev/shm
# directory. SLURMCI_KEEP=1 keeps DIR (the logs are in DIR/log).
set -euo pipefail
# Debian installs the daemons in /usr/sbin, which a CI shell may lack.
case ":$PATH:" in *:/usr/sbin:*) ;; *) export PATH=$PATH:/usr/sbin:/sbin ;; esac

now() { date +%s.%N; }
dt() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
log() { echo "[slurmci $(date +%T.%3N)] $*" >&2; }
# Zombies count as dead: PID 1 may reap late (SLURM.md caveat 8), and
# kill -0 succeeds on a zombie.
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${st:0:1}" != Z ]; }

NODE=ci-gpu0
NGPU=2
NCPU=8

# The TCP ports in use on this machine (any state, IPv4 and IPv6), decimal.
ports_in_use() {
        local f
        for f in /proc/net/tcp /proc/net/tcp6; do
                [ -r "$f" ] || continue
                # sl local_address(HEX:PORT) ...
                while read -r _ local _; do
                        echo $((16#${local##*:}))
                done < <(tail -n +2 "$f")
        done
}

# A port base whose pair (base, base+1) is free now, from 20000-32766 (below
# Linux's ephemeral range, where srun's own connections go).
pick_ports() {
        local used base
        used=" $(ports_in_use | sort -un | tr '\n' ' ') "
        for _ in $(seq 1 50); do
                base=$((20000 + (RANDOM % 6383) * 2))
                [[ $used == *" $base "* || $used == *" $((base + 1)) "* ]] && continue
                echo "$base"
                return 0
        done
        log "no free port pair found"
        return 1
}

# PIDs of the processes whose parent is one of $@, recursively.
descendants() {
        local p c
        for p in "$@"; do
                for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do
                        echo "$c"
                        descendants "$c"
                done
        done
}

# slurmstepd processes of this cluster (they inherit SLURM_CONF from slurmd)
# and what they run: left behind when a step outlives its srun and the
# jobs could not be cancelled in time.
stray_steps() {
        local d=$1 p env
        for p in $(pgrep -x slurmstepd 2>/dev/null || true); do
                env=$(tr '\0' '\n' 2> /dev/null < "/proc/$p/environ") || continue
                [[ $'\n'$env$'\n' == *$'\n'"SLURM_CONF=$d/etc/slurm.conf"$'\n'* ]] || continue
                echo "$p"
                descendants "$p"
        done
}

stop_cluster() {
        local d=$1 p st jobs cmdline
        [ -d "$d" ] || { log "no such dir $d"; return 0; }
        d=$(cd "$d" && pwd) # absolute, no trailing slash: as the daemons' command lines name it
        # Never remove a directory that is not one of ours.
        case $(basename "$d") in slurmci.*) ;; *) log "'$d' is not a slurmci directory, not touching it"; return 1 ;; esac
        [ -f "$d/pids" ] || [ -f "$d/etc/slurm.conf" ] || { log "'$d' has no pids file, not touching it"; return 1; }
        # Jobs still running (a step whose srun was killed keeps its
        # allocation until its time limit): cancel them while slurmctld is up.
        if [ -f "$d/etc/slurm.conf" ] && [ -f "$d/pids" ] && alive "$(sed -n 2p "$d/pids")"; then
                jobs=$(SLURM_CONF=$d/etc/slurm.conf squeue -h -o %i 2>/dev/null || true)
                if [ -n "$jobs" ]; then
                        log "cancelling jobs left: ${jobs//$'\n'/ }"
                        # shellcheck disable=SC2086
                        SLURM_CONF=$d/etc/slurm.conf scancel $jobs 2>/dev/null || true
                        for _ in $(seq 1 50); do
                                [ -z "$(SLURM_CONF=$d/etc/slurm.conf squeue -h -o %i 2>/dev/null || true)" ] && break
                                sleep 0.1
                        done
                fi
        fi
        if [ -f "$d/pids" ]; then
                for p in $(tac "$d/pids"); do
                        # only a PID that is still our daemon (its command line names $d)
                        cmdline=$(tr '\0' ' ' 2> /dev/null < "/proc/$p/cmdline") || continue
                        [[ $cmdline == *"$d/"* ]] || continue
                        kill "$p" 2>/dev/null || continue
                        for _ in $(seq 1 100); do # up to 10 s per daemon
                                alive "$p" || break
                                sleep 0.1
                        done
                        if alive "$p"; then
                                log "pid $p ignored SIGTERM, SIGKILL"
                                kill -9 "$p" 2>/dev/null || true
                        fi
                done
        fi
        p=$(stray_steps "$d" | tr '\n' ' ')
        if [ -n "${p// /}" ]; then
                log "killing job step processes left behind: $p"
                # shellcheck disable=SC2086
                kill -9 $p 2>/dev/null || true
        fi
        if [ -f "$d/cgdir" ]; then
                st=$(cat "$d/cgdir")
                case $st in /dev/shm/slurmci-cg.*) rmdir "$st" 2>/dev/null || true ;; esac
        fi
        if [ "${SLURMCI_KEEP:-0}" = 1 ]; then log "kept $d"; else rm -rf "$d"; fi
}

# One attempt on the ports $1, $1+1. Exit status 75: a port was taken
# (the caller retries on others); anything else but 0: failed.
start_attempt() {
        local port_ctld=$1 port_slurmd=$(($1 + 1))
        local D T0 T1 state="" p
        D=$(mktemp -d /tmp/slurmci.XXXXXX)
        chmod 755 "$D" # munged: "Socket is inaccessible: execute permissions for all required"
        mkdir -p "$D"/{etc,state,spool/slurmd,log,run,munge,dev}
        chmod 755 "$D/munge"
        : > "$D/pids"
        # If anything below fails (or we are interrupted), undo what was started.
        # shellcheck disable=SC2064
        trap "start_failed '$D'" EXIT
        trap 'exit 130' INT TERM
        export SLURM_CONF=$D/etc/slurm.conf # read by every slurm command and daemon

        cat > "$D/etc/slurm.conf" <<EOF
ClusterName=ci
SlurmctldHost=localhost
SlurmctldPort=$port_ctld
SlurmdPort=$port_slurmd
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.sock
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/slurmd
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=$NODE NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$NCPU Sockets=1 CoresPerSocket=$NCPU ThreadsPerCore=1 RealMemory=1000 Gres=gpu:$NGPU State=UNKNOWN
PartitionName=a100 Nodes=ALL MaxTime=INFINITE State=UP
PartitionName=h100 Nodes=ALL MaxTime=INFINITE State=UP
PartitionName=hang Nodes=ALL MaxTime=INFINITE State=UP
EOF
        # gres/gpu drops File-less GPUs and rejects regular files: char
        # devices (mknod needs CAP_MKNOD), never opened by anything here.
        for ((i = 0; i < NGPU; i++)); do mknod "$D/dev/nvidia$i" c 195 "$i"; done
        echo "NodeName=$NODE Name=gpu File=$D/dev/nvidia[0-$((NGPU - 1))]" > "$D/etc/gres.conf"
        # slurmd 22.05 initialises a cgroup plugin even with linuxproc +
        # task/none and dies without a usable /sys/fs/cgroup; cgroup/v1 only
        # checks that its mount point is a tmpfs: an empty dir on /dev/shm.
        if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
                local cg
                cg=$(mktemp -d /dev/shm/slurmci-cg.XXXXXX)
                echo "$cg" > "$D/cgdir"
                printf 'CgroupPlugin=cgroup/v1\nCgroupMountpoint=%s\n' "$cg" > "$D/etc/cgroup.conf"
        fi

        T0=$(now)
        mungekey -c -k "$D/munge/munge.key"
        munged --key-file="$D/munge/munge.key" --socket="$D/munge/munge.sock" \
                --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
                --seed-file="$D/munge/munged.seed" # forks; the pid file exists when it returns
        cat "$D/munge/munged.pid" >> "$D/pids"
        munge -S "$D/munge/munge.sock" -n | unmunge -S "$D/munge/munge.sock" > /dev/null
        # -D (foreground) + & gives the PID at once and shows an early death;
        # stdout/stderr must not stay attached to the caller's $(...).
        slurmctld -D -f "$SLURM_CONF" < /dev/null >> "$D/log/slurmctld.out" 2>&1 &
        echo $! >> "$D/pids"
        # slurmd only once slurmctld answers (else it retries 1 s later)
        for _ in $(seq 1 300); do
                alive "$(tail -n 1 "$D/pids")" || { log "slurmctld died during startup"; exit 1; }
                [[ $(scontrol ping 2> /dev/null) == *"is UP"* ]] && break
                sleep 0.05
        done
        slurmd -D -N "$NODE" -f "$SLURM_CONF" < /dev/null >> "$D/log/slurmd.out" 2>&1 &
        echo $! >> "$D/pids"
        for _ in $(seq 1 300); do # up to 60 s for the node to register
                while read -r p; do
                        alive "$p" || { log "daemon pid $p died during startup"; exit 1; }
                done < "$D/pids"
                state=$(sinfo -h -n "$NODE" -p a100 -o %T 2> /dev/null || true)
                [ "$state" = idle ] && break
                sleep 0.1
        done
        [ "$state" = idle ] || { log "node never became idle (state '$state')"; sinfo -R >&2 || true; exit 1; }
        T1=$(now)
        log "cluster ready in $(dt "$T0" "$T1") s (dir $D, ports $port_ctld/$port_slurmd)"
        echo "export SLURM_CONF=$SLURM_CONF SLURMCI_DIR=$D"
        trap - EXIT INT TERM
}

# The EXIT trap of a failed attempt: show the logs, say whether a port was
# taken (status 75), stop what was started.
start_failed() {
        local rc=$? d=$1
        trap - EXIT
        [ "$rc" -ne 0 ] || rc=1
        tail -n 12 "$d"/log/*.log "$d"/munge/munged.log >&2 2> /dev/null || true
        if grep -qs 'Address already in use' "$d"/log/*; then
                rc=75
        fi
        log "start failed (status $rc$([ "$rc" -ne 75 ] || echo ': a port was taken'))"
        stop_cluster "$d" || true
        exit "$rc"
}

start_cluster() {
        local base rc
        for cmd in munged mungekey munge unmunge slurmctld slurmd srun scontrol sinfo squeue scancel; do
                command -v "$cmd" > /dev/null || { log "$cmd is not installed"; exit 1; }
        done
        for try in 1 2 3 4 5; do
                base=${SLURMCI_PORT_BASE:-$(pick_ports)}
                rc=0
                # a process of its own: in ( ) || … set -e would be ignored
                "$BASH" "$0" _attempt "$base" || rc=$?
                [ "$rc" -eq 0 ] && return 0
                if [ "$rc" -ne 75 ] || [ -n "${SLURMCI_PORT_BASE:-}" ]; then
                        exit "$rc"
                fi
                log "ports $base/$((base + 1)) were taken (attempt $try), trying others"
        done
        exit 1
}

case "${1:-}" in
start) start_cluster ;;
_attempt) start_attempt "$2" ;;
stop) stop_cluster "${2:-${SLURMCI_DIR:?pass the dir or set SLURMCI_DIR}}" ;;
*)
        echo "usage: $0 start | stop DIR" >&2
        exit 2
        ;;
esac
