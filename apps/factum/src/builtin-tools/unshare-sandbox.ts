import { mountSteps, type SandboxPolicy } from './sandbox-mounts.js';

/** The util-linux programs the `unshare` sandbox is made of, by absolute path. */
export type UnsharePrograms = {
  readonly unshare: string;
  readonly setpriv: string;
  readonly setsid: string;
};

/**
 * Runs as pid 1 of the new namespaces, as root of a new user namespace (mapped to the
 * user): builds the sandbox's root the way bubblewrap does — a read-only copy of the
 * whole root, a fresh `/dev` and `/proc`, then the mount steps it is given — pivots
 * into it, and runs the command as a child with every capability dropped and no way to
 * gain one (no mount of its own can be undone, nothing hidden uncovered). It stays in
 * the foreground: as pid 1 without a handler it ignores a SIGTERM from outside, which
 * then reaches only the command and what it started; when it exits, the kernel kills
 * whatever is left in the namespace. A failed step stops it before the command runs.
 *
 * Arguments: `setpriv <path>`, then `tmpfs|ro-bind|bind|chdir <path>` pairs, `--`, the command.
 */
const SANDBOX_INIT = `set -eu
trap 'echo "factum: the sandbox could not be set up" >&2' EXIT
had_path=\${PATH+x}
user_path=\${PATH-}
PATH=/usr/sbin:/usr/bin:/sbin:/bin
root=/sys
at() { if [ ! -e "$root$1" ]; then mkdir -p "$root$1"; fi; }
before=$(awk '{ printf " %s", $1 } END { print " " }' /proc/self/mountinfo)
mount --rbind / "$root"
# Every mount of the copy, made read-only, but those already so and those the fresh /dev,
# /proc and /tmp and the empty /run cover anyway (one program start each is the cost).
awk -v before="$before" -v root="$root" 'index(before, " " $1 " ") == 0 && $6 !~ /^ro(,|$)/ && index($5, root "/dev/") != 1 && index($5, root "/proc/") != 1 && index($5, root "/tmp/") != 1 && index($5, root "/run/") != 1 { p = $5; gsub(/\\\\040/, " ", p); gsub(/\\\\011/, "\\t", p); gsub(/\\\\134/, "\\\\", p); print p }' /proc/self/mountinfo |
  while IFS= read -r point; do mount -o remount,bind,ro "$point"; done
mount -t tmpfs -o mode=0755,nosuid factum-dev "$root/dev"
for node in null zero full random urandom tty; do : > "$root/dev/$node"; mount --bind "/dev/$node" "$root/dev/$node"; done
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
mkdir "$root/dev/shm" "$root/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev factum-shm "$root/dev/shm"
if mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$root/dev/pts" 2>/dev/null; then ln -s pts/ptmx "$root/dev/ptmx"; fi
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
setpriv=
workdir=/
while [ "$#" -gt 0 ]; do
  case $1 in
    --) shift; break ;;
    setpriv) setpriv=$2 ;;
    chdir) workdir=$2 ;;
    tmpfs) at "$2"; mount -t tmpfs -o mode=0755,nosuid,nodev factum "$root$2" ;;
    bind) at "$2"; mount --rbind "$2" "$root$2" ;;
    ro-bind) at "$2"; mount --bind "$2" "$root$2"; mount -o remount,bind,ro "$root$2" ;;
    *) exit 64 ;;
  esac
  shift 2
done
cd "$root"
pivot_root . .
umount -l .
cd "$workdir"
if [ -n "$had_path" ]; then PATH=$user_path; else unset PATH; fi
trap - EXIT
set +e
"$setpriv" --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"
exit $?
`;

/**
 * The program and arguments (before the command) that run a command in the `unshare`
 * sandbox for `policy`: `setpriv` ties it to Factum's life (`--pdeathsig`), `unshare`
 * makes new user, PID, mount, IPC, UTS and (unless allowed) network namespaces and
 * kills its child when it dies, `setsid` gives the init its own session and process
 * group, and the init (above) builds the file system.
 */
export function unshareCommand(
  programs: UnsharePrograms,
  policy: SandboxPolicy,
  env: NodeJS.ProcessEnv,
): [string, string[]] {
  const namespaces = ['--user', '--map-root-user', '--pid', '--kill-child', '--mount', '--ipc', '--uts'];
  if (!policy.allowNetwork) namespaces.push('--net');
  const steps = mountSteps(policy, env).flatMap((step) => [step.kind, step.path]);
  return [
    programs.setpriv,
    [
      '--pdeathsig',
      'KILL',
      '--',
      programs.unshare,
      ...namespaces,
      '--',
      programs.setsid,
      '/bin/sh',
      '-c',
      SANDBOX_INIT,
      'factum-sandbox',
      'setpriv',
      programs.setpriv,
      ...steps,
      'chdir',
      policy.workspace,
      '--',
    ],
  ];
}
