"""``python -m ember.distributed.run -n 4 train.py [args]``: start a job through mpiexec.

A thin wrapper: it finds mpiexec (the one of the ``mpich`` wheel next to this Python, or on
PATH) and runs ``mpiexec -n 4 <this python> train.py args``, with the same exit status. One
thing it adds: when a rank dies by a signal (killed, out of memory), mpiexec names only its
process id; the wrapper names the rank.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

RUN_DIR = "EMBER_RUN_DIR"  # where each rank records its pid (read back to name a dead rank)
_PID = re.compile(r"PID (\d+) RUNNING AT (\S+)")
_EXIT = re.compile(r"EXIT CODE: (\d+)")


def find_mpiexec(explicit: str | None = None) -> str:
    """The mpiexec to use: ``explicit``, $EMBER_MPIEXEC, the one beside sys.executable (the
    mpich wheel puts it there), or the first on PATH."""
    for candidate in (explicit, os.environ.get("EMBER_MPIEXEC"),
                      os.path.join(os.path.dirname(sys.executable), "mpiexec")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError("mpiexec was not found: pip install 'ember[distributed]' "
                                "(the mpich wheel brings it), or pass --mpiexec PATH")
    return found


def record_rank(rank: int) -> None:
    """Called by init_process_group on each rank when the job was started by this wrapper."""
    directory = os.environ.get(RUN_DIR)
    if not directory or not os.path.isdir(directory):
        return
    import socket

    with open(os.path.join(directory, f"rank-{rank}"), "w") as file:
        file.write(f"{os.getpid()} {socket.gethostname()}\n")


def _ranks_by_pid(directory: str) -> dict:
    ranks = {}
    for name in os.listdir(directory):
        if name.startswith("rank-"):
            with open(os.path.join(directory, name)) as file:
                pid = file.read().split()[0]
            ranks[pid] = int(name[len("rank-"):])
    return ranks


def _describe(code: int) -> str:
    if code > 128 and code - 128 in signal.valid_signals():
        code -= 128
    try:
        return f"exit code {code} (killed by {signal.Signals(code).name})"
    except ValueError:
        return f"exit code {code}"


def parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Run a script on N processes through mpiexec.")
    parser.add_argument("-n", "--nproc", "--nproc-per-node", dest="nproc", type=int,
                        required=True, help="how many processes (ranks) to start")
    parser.add_argument("--mpiexec", default=None, help="the mpiexec to use")
    parser.add_argument("-m", dest="module", action="store_true",
                        help="run the script argument as a module (python -m)")
    parser.add_argument("script", help="the Python script (or module with -m)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    options = parser.parse_args(argv)
    if options.nproc < 1:
        parser.error(f"-n must be at least 1, got {options.nproc}")
    return options


def main(argv=None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv)
    try:
        mpiexec = find_mpiexec(options.mpiexec)
    except FileNotFoundError as error:
        print(f"ember.distributed.run: {error}", file=sys.stderr)
        return 2
    target = ["-m", options.script] if options.module else [options.script]
    command = [mpiexec, "-n", str(options.nproc), sys.executable, *target, *options.args]
    with tempfile.TemporaryDirectory(prefix="ember-run-") as directory:
        env = dict(os.environ, **{RUN_DIR: directory})
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True,
                                   bufsize=1, errors="replace")
        dead_pid = exit_code = None
        try:
            for line in process.stdout:  # pass everything through, noting mpiexec's report
                sys.stdout.write(line)
                sys.stdout.flush()
                found = _PID.search(line)
                if found:
                    dead_pid = found.group(1)
                found = _EXIT.search(line)
                if found and dead_pid is not None and exit_code is None:
                    exit_code = int(found.group(1))
            code = process.wait()
        except KeyboardInterrupt:
            process.send_signal(signal.SIGINT)
            code = process.wait()
        if code != 0 and dead_pid is not None:
            rank = _ranks_by_pid(directory).get(dead_pid)
            who = f"rank {rank} (pid {dead_pid})" if rank is not None else f"pid {dead_pid}"
            what = _describe(exit_code) if exit_code is not None else "an error"
            print(f"ember.distributed.run: {who} ended with {what}; mpiexec stopped the "
                  "other ranks.", file=sys.stderr, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
