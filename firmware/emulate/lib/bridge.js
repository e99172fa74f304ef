// The emulated unit's USB CDC on a PTY, through pty-bridge.py (Node has no
// openpty): the daemon opens `link` as it would /dev/chessclock/<name> of
// a plugged unit.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const HELPER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'pty-bridge.py');

export class PtyBridge {
  /// `onHostBytes(bytes)`: what the daemon wrote to the port.
  static open(link, onHostBytes) {
    return new Promise((resolve, reject) => {
      const child = spawn('python3', [HELPER, link], { stdio: ['pipe', 'pipe', 'pipe'] });
      const bridge = new PtyBridge(child, link);
      let err = '';
      child.stdout.on('data', (b) => onHostBytes(new Uint8Array(b)));
      child.stderr.on('data', (b) => {
        err += b.toString();
        if (!bridge.slave && err.includes('\n')) {
          bridge.slave = err.split('\n')[0];
          resolve(bridge);
        }
      });
      child.on('error', reject);
      child.on('exit', (code) => {
        bridge.closed = true;
        if (!bridge.slave) reject(new Error(`pty-bridge exited (${code}): ${err}`));
      });
    });
  }

  constructor(child, link) {
    this.child = child;
    this.link = link;
    this.closed = false;
    this.slave = null;
  }

  /// Bytes from the firmware to the daemon.
  write(bytes) {
    if (!this.closed && bytes.length) this.child.stdin.write(Buffer.from(bytes));
  }

  /// Unplugs: the PTY master closes (the daemon's port hangs up) and the
  /// link goes away.
  close() {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.stdin.end();
    });
  }
}
