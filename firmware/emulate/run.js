#!/usr/bin/env node
// Runs the emulated-firmware tests: the UF2s that firmware/build-uf2 wrote,
// on rp2040js, first against a scripted host on the emulator's own clock,
// then through PTY bridges against the real chessclockd. Prints each
// test, the timing figures, and closes with `N passed, M failed`.
//
// Usage: node run.js --uf2-dir DIR --daemon BIN [--only SUBSTRING]

import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { steppedTests } from './tests/stepped.js';
import { daemonTests } from './tests/daemon.js';
import { KINDS } from './lib/unit.js';

const { values } = parseArgs({
  options: {
    'uf2-dir': { type: 'string' },
    daemon: { type: 'string' },
    only: { type: 'string' },
  },
});

const uf2Dir = values['uf2-dir'];
const figures = {};
const started = Date.now();
let passed = 0;
let failed = 0;

function missing() {
  const gone = Object.keys(KINDS).filter((k) => !existsSync(`${uf2Dir}/chessclock-pico-${k}.uf2`));
  return gone.length ? `UF2s missing in ${uf2Dir}: ${gone.join(', ')} (run firmware/build-uf2)` : null;
}

let unselected = 0;

async function run(tests) {
  for (const { name, fn } of tests) {
    if (values.only && !name.includes(values.only)) {
      unselected++;
      continue;
    }
    const t = Date.now();
    try {
      await fn();
      passed++;
      console.log(`ok   ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)\n     ${(e.stack || String(e)).split('\n').slice(0, 6).join('\n     ')}`);
    }
  }
}

const gone = uf2Dir ? missing() : 'no --uf2-dir';
if (gone) {
  // Not a skip: without the binaries there is nothing to prove.
  console.log(`FAIL setup: ${gone}`);
  failed++;
} else {
  await run(steppedTests({ uf2Dir, figures }));
  if (!values.daemon || !existsSync(values.daemon)) {
    console.log(`FAIL setup: chessclockd binary not found (${values.daemon})`);
    failed++;
  } else {
    await run(daemonTests({ uf2Dir, daemon: values.daemon, figures }));
  }
}

function spread(xs) {
  const v = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!v.length) return 'none';
  const f = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));
  return `min ${f(v[0])}, median ${f(v[Math.floor(v.length / 2)])}, max ${f(v[v.length - 1])} (${v.length})`;
}

// The figures, summed up: each is emulated time unless it says wall.
const stepped = figures.stepped?.presses ?? [];
const live = Object.values(figures.daemon ?? {}).flatMap((r) => r.presses);
const linkedLive = live.filter((p) => p.edgeToAckMs != null && p.edgeToAckMs < 1000);
console.log('\nFigures (see firmware/emulate/README.md for what they can and cannot tell):');
console.log(`  edge to stamp, µs (scripted host): ${spread(stepped.map((p) => p.edgeToStampUs))}`);
console.log(`  edge to BUTTON sent, µs (scripted host; 1.4 ms bounce + 5 ms debounce): ${spread(stepped.map((p) => p.edgeToSendUs))}`);
console.log(`  edge to stamp, µs (with chessclockd): ${spread(live.map((p) => p.edgeToStampUs))}`);
console.log(`  press (first edge) to ACK, ms, linked presses: ${spread(linkedLive.map((p) => p.edgeToAckMs))}`);
console.log(`  BUTTON sent to ACK received, ms (bridge + daemon + bridge): ${spread(linkedLive.map((p) => p.buttonToAckMs))}`);
const queued = live.filter((p) => p.edgeToAckMs != null && p.edgeToAckMs >= 1000);
console.log(`  presses queued while unlinked: the new WELCOME to the ACK, ms (the daemon holds them for 4 heartbeats, SPEC 9.2 item 8): ${spread(queued.map((p) => p.welcomeToAckMs))}`);
console.log(`  daemon's accounted instant minus the first edge, µs: ${spread(live.map((p) => p.accountedMinusEdgeUs))}`);
console.log(`  heartbeat emitted late against the wall clock, µs (the emulator's pacing): ${spread(Object.values(figures.daemon ?? {}).flatMap((r) => r.heartbeatLateUs))}`);
for (const [kind, d] of Object.entries(figures.displayUpdate ?? {})) {
  console.log(`  DISPLAY to the chips (${kind}): first edge ${d.frameToFirstEdgeUs} µs after the frame arrived, ${d.busyMs} ms of bit-banging`);
}
if (figures.replug) {
  const r = figures.replug;
  console.log(`  battery unit replugged: HELLO ${r.usbResetToHelloMs} ms after the USB reset, ${r.lastHostFrameToHelloMs} ms after the host's last frame (T = 1000)`);
}
if (figures.core0Busy) {
  const b = figures.core0Busy;
  console.log(`  core 0 busy (buttons unit): ${(b.usbUnconfigured * 100).toFixed(1)} % before a USB host configures it, ${(b.linkedIdle * 100).toFixed(3)} % linked and idle`);
}
for (const [name, r] of Object.entries(figures.daemon ?? {})) {
  const l = r.emulatorBehindWallMs;
  console.log(`  emulator behind the wall clock, ms (${name}): p50 ${l.p50?.toFixed(2)}, p99 ${l.p99?.toFixed(2)}, max ${l.max.toFixed(2)} (at ${l.maxAtMs?.toFixed(0)} ms)`);
}
if (process.env.EMULATE_FIGURES_JSON) {
  for (const r of Object.values(figures.daemon ?? {})) r.heartbeatLateUs = spread(r.heartbeatLateUs);
  console.log(JSON.stringify(figures, null, 1));
}
console.log(`wall time ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (unselected) console.log(`${unselected} tests not run: not selected by --only ${JSON.stringify(values.only)}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
