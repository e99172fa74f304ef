#!/usr/bin/env python3
"""One end of the bridge from an emulated unit's USB CDC to a PTY.

Node has no openpty, so this small helper opens the PTY, puts it in raw
mode (CDC-ACM carries bytes, not lines), points LINK at its slave, the way
udev points /dev/chessclock/<role>-<serial> at a ttyACM, and relays bytes:
PTY master to stdout (what the daemon wrote, for the emulated USB host to
put on the bulk OUT endpoint) and stdin to the PTY master (what the
firmware sent). It prints the slave's name on stderr when ready.

End of stdin (the harness unplugs the unit, or exits) closes the master,
which the daemon sees as a hang-up, and removes LINK.

Usage: pty-bridge.py LINK
"""

import os
import select
import sys
import tty


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: pty-bridge.py LINK", file=sys.stderr)
        return 2
    link = sys.argv[1]
    master, slave = os.openpty()
    tty.setraw(slave)
    name = os.ttyname(slave)
    tmp = f"{link}.tmp{os.getpid()}"
    os.symlink(name, tmp)
    os.replace(tmp, link)
    # The slave stays open here so the daemon's close does not hang the
    # line up: a port the daemon reopens is the same device.
    print(name, file=sys.stderr, flush=True)
    stdin = sys.stdin.fileno()
    stdout = sys.stdout.fileno()
    try:
        while True:
            ready, _, _ = select.select([master, stdin], [], [])
            if master in ready:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    data = b""
                if data:
                    os.write(stdout, data)
            if stdin in ready:
                data = os.read(stdin, 4096)
                if not data:
                    break
                os.write(master, data)
    finally:
        try:
            if os.path.islink(link) and os.readlink(link) == name:
                os.unlink(link)
        except OSError:
            pass
        os.close(master)
        os.close(slave)
    return 0


if __name__ == "__main__":
    sys.exit(main())
