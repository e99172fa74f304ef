// The real daemon for the emulated units: a private dbus-daemon (session
// bus on a socket in the run's folder), chessclockd with a config naming
// the bridges' PTY links, and its board's D-Bus methods through busctl.

import { spawn, execFile } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';

const BUS_NAME = 'org.chessclockd.ChessClock1';
const BOARD_IFACE = 'org.chessclockd.ChessClock1.Board';

function once(child, event) {
  return new Promise((resolve) => child.once(event, resolve));
}

export class Daemon {
  /// `bin`: the chessclockd binary. `dir`: a fresh folder for the bus
  /// socket, the state, the config and the log. `board`: { control,
  /// buttons, displays } (device paths).
  static async start({ bin, dir, board }) {
    mkdirSync(dir, { recursive: true });
    const bus = spawn('dbus-daemon', [
      '--session',
      '--nofork',
      '--nopidfile',
      '--print-address=1',
      `--address=unix:path=${path.join(dir, 'bus')}`,
    ], { stdio: ['ignore', 'pipe', 'ignore'] });
    const address = await new Promise((resolve, reject) => {
      let out = '';
      bus.stdout.on('data', (b) => {
        out += b.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0].trim());
      });
      bus.on('error', reject);
      bus.on('exit', (code) => reject(new Error(`dbus-daemon exited (${code})`)));
    });
    // A display is a path, or { device, side } for the side a unit shows.
    const displays = board.displays
      .map((d) => (typeof d === 'string' ? JSON.stringify(d) : `{ device = ${JSON.stringify(d.device)}, side = ${JSON.stringify(d.side)} }`))
      .join(', ');
    const config = path.join(dir, 'chessclockd.toml');
    // The [daemon] table of the project's end-to-end tests: the private
    // session bus, state of its own, no real-time priority or locked memory
    // (the machine is shared).
    writeFileSync(
      config,
      [
        '[daemon]',
        'bus = "session"',
        `state-dir = ${JSON.stringify(path.join(dir, 'state'))}`,
        'rt-priority = 0',
        'mlock = false',
        '',
        '[[board]]',
        'id = "b1"',
        `control = ${JSON.stringify(board.control)}`,
        ...(board.buttons ? [`buttons = ${JSON.stringify(board.buttons)}`] : []),
        `displays = [${displays}]`,
        '',
      ].join('\n'),
    );
    const logPath = path.join(dir, 'daemon.log');
    const log = createWriteStream(logPath);
    const child = spawn(bin, ['--config', config, '--session'], {
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: address, RUST_LOG: 'info', NOTIFY_SOCKET: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr.pipe(log);
    const d = new Daemon(bus, child, address, logPath);
    child.on('exit', (code, signal) => {
      d.exited = { code, signal };
    });
    return d;
  }

  constructor(bus, child, address, logPath) {
    this.bus = bus;
    this.child = child;
    this.address = address;
    this.logPath = logPath;
    this.exited = null;
  }

  log() {
    try {
      return readFileSync(this.logPath, 'utf8');
    } catch {
      return '';
    }
  }

  /// Calls a method of board b1; resolves to its parsed reply (the JSON
  /// string of State/History parsed once more).
  call(method) {
    return new Promise((resolve, reject) => {
      execFile(
        'busctl',
        [`--address=${this.address}`, '--json=short', 'call', BUS_NAME, '/org/chessclockd/ChessClock1/board/b1', BOARD_IFACE, method],
        { timeout: 5000 },
        (err, stdout, stderr) => {
          if (err) {
            reject(new Error(`busctl ${method}: ${stderr || err.message}`));
            return;
          }
          if (!stdout.trim()) {
            resolve(null);
            return;
          }
          const reply = JSON.parse(stdout);
          const data = reply.data?.[0];
          resolve(typeof data === 'string' ? JSON.parse(data) : data);
        },
      );
    });
  }

  state() {
    return this.call('State');
  }

  history() {
    return this.call('History');
  }

  async stop() {
    if (!this.exited) {
      const exit = once(this.child, 'exit');
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await exit;
      clearTimeout(timer);
    }
    const busExit = once(this.bus, 'exit');
    this.bus.kill('SIGTERM');
    await busExit;
    return this.exited;
  }
}
