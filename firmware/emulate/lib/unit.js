// An emulated unit as a whole: the Pico running a UF2, the board around
// it, the USB host, and (when plugged) the PTY bridge to the daemon, with
// every frame both ways logged with its emulated instant. Two ways to run
// it: `runFor()` steps the emulator's clock exactly (tests with a scripted
// host); `Realtime` paces it to the wall clock so that the real daemon,
// which keeps CLOCK_MONOTONIC, can talk to it.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Pico } from './pico.js';
import { UsbHost } from './usbhost.js';
import { Board } from './board.js';
import { FrameReader } from './protocol.js';
import { PtyBridge } from './bridge.js';

/// The UF2s firmware/build-uf2 writes, by kind name.
export const KINDS = {
  buttons: { role: 'buttons', buttons: true, display: false, panels: 0 },
  display: { role: 'display', buttons: false, display: true, chip: 'tm1637', panels: 2 },
  'display-max7219': { role: 'display', buttons: false, display: true, chip: 'max7219', panels: 2 },
  'one-panel': { role: 'display', buttons: false, display: true, chip: 'tm1637', panels: 1 },
  combined: { role: 'combined', buttons: true, display: true, chip: 'tm1637', panels: 2 },
  'combined-max7219': { role: 'combined', buttons: true, display: true, chip: 'max7219', panels: 2 },
};

export const monotonicNs = () => Number(process.hrtime.bigint());

export class Unit {
  /// `uf2Dir`: where chessclock-pico-<kind>.uf2 are. `uniqueId`: the flash
  /// id (8 bytes), which makes the serial.
  constructor({ kind, uf2Dir, uniqueId, seed = 1 }) {
    this.kindName = kind;
    this.kind = KINDS[kind];
    if (!this.kind) throw new Error(`unknown unit kind ${kind}`);
    this.uf2Path = path.join(uf2Dir, `chessclock-pico-${kind}.uf2`);
    this.pico = new Pico({ uf2: readFileSync(this.uf2Path), uniqueId, name: kind, seed });
    this.frames = [];
    this.cut = false; // a link loss: nothing crosses the bridge either way
    this.bridge = null;
    this.t0 = null; // CLOCK_MONOTONIC ns of emulated instant 0 (Realtime)
    this.devReader = new FrameReader((f) => this.log('dev', f));
    this.hostReader = new FrameReader((f) => this.log('host', f));
    this.usb = new UsbHost(this.pico, {
      onData: (bytes) => {
        this.devReader.push(bytes);
        if (this.bridge && !this.cut) this.bridge.write(bytes);
      },
      onEnumerated: (info) => {
        this.enumerated = info;
      },
    });
    this.board = new Board(this.pico, this.kind);
    this.pico.onPowerOn.push(() => {
      this.devReader = new FrameReader((f) => this.log('dev', f));
      if (this.realtime) this.t0 = monotonicNs();
    });
    this.listeners = [];
  }

  log(dir, frame) {
    const wallNs = monotonicNs();
    const entry = { dir, nanos: this.pico.nanos, boot: this.pico.boots, wallNs, ...frame };
    // Paced to the wall clock: how late this frame crossed, against the
    // instant its emulated time stands for.
    if (this.realtime?.running) entry.lateNs = wallNs - (this.t0 + entry.nanos);
    this.frames.push(entry);
    for (const f of this.listeners) f(entry);
  }

  runFor(micros) {
    this.pico.runFor(micros);
  }

  /// Bytes a scripted host (or the bridge) sends to the firmware.
  hostWrite(bytes) {
    this.hostReader.push(bytes);
    this.usb.write(bytes);
  }

  async plug(link) {
    this.bridge = await PtyBridge.open(link, (bytes) => {
      if (this.cut) return;
      // The daemon's bytes land at the emulated instant that matches now.
      this.realtime?.catchUp(this);
      this.hostWrite(bytes);
    });
    return this.bridge;
  }

  async unplug() {
    const b = this.bridge;
    this.bridge = null;
    if (b) await b.close();
  }

  /// Emulated µs of the device clock now.
  get micros() {
    return this.pico.micros;
  }

  /// The ideal CLOCK_MONOTONIC µs of emulated instant `nanos` (Realtime).
  monotonicUs(nanos) {
    return (this.t0 + nanos) / 1000;
  }

  framesNamed(name, dir) {
    return this.frames.filter((f) => f.name === name && (!dir || f.dir === dir));
  }
}

/// Paces units to the wall clock: emulated time never runs ahead of
/// CLOCK_MONOTONIC since the unit's power-on, and catches up after a busy
/// stretch (the emulator runs slower than the chip while code runs, and
/// skips ahead while the cores sleep). `lagNs` records how far behind the
/// emulated clock was at each catch-up: the emulation's timing error.
export class Realtime {
  constructor() {
    this.units = [];
    this.timer = null;
    this.maxLagNs = 0;
    this.lagSamples = [];
  }

  add(unit) {
    unit.realtime = this;
    unit.t0 = monotonicNs() - unit.pico.nanos;
    this.units.push(unit);
  }

  catchUp(unit, budget = Infinity) {
    const target = monotonicNs() - unit.t0;
    const behind = target - unit.pico.nanos;
    const done = unit.pico.runUntil(target, budget);
    return { behind, done };
  }

  start() {
    // Emulated time so far maps to just before now: the set-up before the
    // start (spawning bridges and the daemon) is not counted as lag.
    for (const u of this.units) u.t0 = monotonicNs() - u.pico.nanos;
    this.running = true;
    this.startedNs = monotonicNs();
    const tick = () => {
      let lagging = false;
      for (const u of this.units) {
        const { behind, done } = this.catchUp(u, 100_000);
        if (!done) lagging = true;
        // The lag that matters is a plugged unit's: one that is unplugged
        // (rebooting after a power cycle) talks to no one meanwhile.
        if (!u.bridge) continue;
        if (behind > this.maxLagNs) {
          this.maxLagNs = behind;
          this.maxLagAtMs = (monotonicNs() - this.startedNs) / 1e6;
        }
        if (this.lagSamples.length < 100_000) this.lagSamples.push(behind);
      }
      this.timer = lagging ? setImmediate(tick) : setTimeout(tick, 1);
      this.timerIsImmediate = lagging;
    };
    tick();
  }

  stop() {
    this.running = false;
    if (this.timer) {
      if (this.timerIsImmediate) clearImmediate(this.timer);
      else clearTimeout(this.timer);
    }
    this.timer = null;
  }
}
