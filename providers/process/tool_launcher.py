"""Starts engine tools for a Node process whose own process starts are costly (providers/process/launcher.ts).

Node's child_process forks, which copies the caller's page tables: ~10 ms of a 280 MB API's event loop per start.
Python's subprocess starts a child with vfork (no page tables copied) from this ~10 MB process: ~0.2 ms, off the
caller's event loop. No imports beyond the standard library.

Protocol. Requests on stdin, one JSON object a line: {"id": n, "cmd": "pdftotext", "args": [...]} starts a tool
(stdin /dev/null, stdout and stderr piped); {"kill": n} SIGKILLs request n's tool. Answers on stdout, frames of
`<length u32 BE><type u8><id u32 BE><payload>` (length counts type, id and payload): P pid (ASCII), O stdout bytes,
E stderr bytes, X exit status (ASCII: the code, or -signal), F the tool could not start (ASCII: errno name, message).
When stdin closes (the parent is gone or stopped the launcher) every running tool is killed and the launcher exits:
it never outlives its parent, and neither do its tools.
"""

import json
import os
import signal
import struct
import subprocess
import sys
import threading

out = sys.stdout.buffer
out_lock = threading.Lock()
procs = {}
procs_lock = threading.Lock()
# Kills asked for before their tool started: it is killed as soon as it runs.
early_kills = set()


def send(kind, rid, payload=b""):
    with out_lock:
        out.write(struct.pack(">IBI", len(payload) + 5, kind, rid) + payload)
        out.flush()


def pump(stream, kind, rid):
    read = stream.read1 if hasattr(stream, "read1") else stream.read
    while True:
        chunk = read(65536)
        if not chunk:
            break
        send(kind, rid, chunk)


def run(rid, cmd, args):
    try:
        proc = subprocess.Popen(
            [cmd] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, close_fds=True
        )
    except OSError as err:
        name = __import__("errno").errorcode.get(err.errno, "EIO")
        send(ord("F"), rid, f"{name} {err.strerror}".encode())
        return
    with procs_lock:
        procs[rid] = proc
        if rid in early_kills:
            early_kills.discard(rid)
            proc.kill()
    send(ord("P"), rid, str(proc.pid).encode())
    err_thread = threading.Thread(target=pump, args=(proc.stderr, ord("E"), rid), daemon=True)
    err_thread.start()
    pump(proc.stdout, ord("O"), rid)
    err_thread.join()
    code = proc.wait()
    with procs_lock:
        procs.pop(rid, None)
    send(ord("X"), rid, str(code).encode())


def kill_all():
    with procs_lock:
        for proc in procs.values():
            try:
                proc.kill()
            except OSError:
                pass


def main():
    signal.signal(signal.SIGTERM, lambda *_: (kill_all(), os._exit(0)))
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        if "kill" in msg:
            with procs_lock:
                proc = procs.get(msg["kill"])
                if proc is None:
                    early_kills.add(msg["kill"])
            if proc is not None:
                try:
                    proc.kill()
                except OSError:
                    pass
            continue
        threading.Thread(target=run, args=(msg["id"], msg["cmd"], msg["args"]), daemon=True).start()
    kill_all()
    os._exit(0)


if __name__ == "__main__":
    main()
