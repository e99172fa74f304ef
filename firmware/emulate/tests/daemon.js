// The UF2s against the real chessclockd: each emulated unit's USB CDC is
// bridged to a PTY the daemon opens as a plugged unit. The emulators are
// paced to CLOCK_MONOTONIC (the daemon's clock), so these runs take real
// time; every wait is for a condition, with a deadline.
//
// What is compared: the daemon's record of each press (its history, in
// CLOCK_MONOTONIC µs) against the lever's first edge, placed on the same
// clock through the unit's emulated-to-monotonic mapping (monotonic time of
// the unit's power-on plus the emulated time); the digits the TM1637 and
// MAX7219 models read off the pins against the daemon's state.

import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Unit, Realtime } from '../lib/unit.js';
import { Daemon } from '../lib/daemon.js';

const WAIT_MS = 10_000;

/// Polls `cond` (sync or async) every 10 ms until it returns a truthy
/// value or `ms` pass; the failure names `what` and the last value seen.
async function waitFor(what, cond, ms = WAIT_MS, detail = () => '') {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await cond();
    } catch (e) {
      last = e;
    }
    if (last && !(last instanceof Error)) return last;
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}: ${last instanceof Error ? last.message : JSON.stringify(last)} ${detail()}`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/// The text a panel shows for `ms` remaining below one hour (the daemon
/// rounds up to the second).
function clockText(ms) {
  const s = Math.floor((Math.max(0, ms) + 999) / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

function linked(state) {
  return state?.devices?.length > 0 && state.devices.every((d) => d.connected === true);
}

function connected(state, role) {
  return state?.devices?.find((d) => d.role === role)?.connected;
}

function presses(history, epoch) {
  return history.events.filter((e) => e.do === 'press').map((e) => ({ ...e, monoUs: e.t_us + epoch }));
}

class Rig {
  constructor({ uf2Dir, daemon, figures }) {
    this.uf2Dir = uf2Dir;
    this.bin = daemon;
    this.figures = figures;
    this.units = {};
    this.realtime = new Realtime();
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'chessclock-emulated-'));
    mkdirSync(path.join(this.dir, 'dev', 'chessclock'), { recursive: true });
    this.pressLog = [];
  }

  async unit(name, kind, id) {
    const u = new Unit({ kind, uf2Dir: this.uf2Dir, uniqueId: [0xe0, 0x30, 0x1a, 0x7e, 0, 0, 0, id], seed: 100 + id });
    this.units[name] = u;
    // Boot and enumerate before the wall clock is followed (a new chip's
    // first milliseconds run slowly: its boot spins until configured, see
    // README "Findings"), then link the PTY where the udev rule would:
    // /dev/chessclock/<iSerialNumber>, from the emulated descriptor.
    u.runFor(30_000);
    assert.ok(u.enumerated, `${kind} enumerated`);
    u.linkPath = path.join(this.dir, 'dev', 'chessclock', u.enumerated.strings.serial);
    await u.plug(u.linkPath);
    this.realtime.add(u);
    return u;
  }

  async start(board) {
    this.realtime.start();
    this.daemon = await Daemon.start({ bin: this.bin, dir: this.dir, board });
    await waitFor('every unit linked', () => this.daemon.state().then(linked), WAIT_MS, () => this.daemon.log().slice(-2000));
  }

  /// The time mapping needs a few heartbeats after a HELLO: wait for 8
  /// DEVICE_HEARTBEATs of `unit` since its last WELCOME.
  async heartbeatsSettled(unit) {
    await waitFor('8 heartbeats since the WELCOME', () => {
      const welcome = unit.frames.filter((f) => f.dir === 'host' && f.name === 'WELCOME').at(-1);
      return welcome && unit.frames.filter((f) => f.dir === 'dev' && f.name === 'DEVICE_HEARTBEAT' && f.nanos > welcome.nanos && f.boot === unit.pico.boots).length >= 8;
    });
  }

  /// Presses `button` of `unit` (bouncing lever, first edge 2 ms from
  /// now) and waits for the daemon's ACK of it. Returns the press's
  /// figures.
  async press(unit, button, { waitAck = true } = {}) {
    this.realtime.catchUp(unit);
    const atNanos = unit.pico.nanos + 2_000_000;
    const boot = unit.pico.boots;
    const edgeUs = unit.board.press(button, { atNanos });
    const p = { unit, button, boot, edgeNanos: atNanos, edgeUs, edgeMonoUs: unit.monotonicUs(atNanos) };
    this.pressLog.push(p);
    if (waitAck) await this.acked(p);
    return p;
  }

  async acked(p) {
    const { unit } = p;
    const b = await waitFor('the BUTTON of the press', () =>
      unit.frames.find((f) => f.dir === 'dev' && f.name === 'BUTTON' && f.boot === p.boot && f.fields.deviceTimeUs >= p.edgeUs && f.nanos >= p.edgeNanos),
    );
    p.event = b.fields.event;
    p.stampUs = b.fields.deviceTimeUs;
    p.sentNanos = b.nanos;
    const ack = await waitFor('the daemon\'s ACK of the press', () =>
      unit.frames.find((f) => f.dir === 'host' && f.name === 'ACK' && f.boot === p.boot && f.nanos >= p.sentNanos && f.fields.event === p.event),
    );
    p.ackNanos = ack.nanos;
    const welcome = unit.frames.filter((f) => f.dir === 'host' && f.name === 'WELCOME' && f.boot === p.boot && f.nanos <= ack.nanos).at(-1);
    p.welcomeNanos = welcome?.nanos;
    return p;
  }

  record(name, extra = {}) {
    const r = this.realtime;
    const lags = [...r.lagSamples].sort((a, b) => a - b);
    const q = (x) => (lags.length ? lags[Math.min(lags.length - 1, Math.floor(x * lags.length))] / 1e6 : null);
    this.figures.daemon ??= {};
    this.figures.daemon[name] = {
      presses: this.pressLog.map((p) => ({
        unit: p.unit.kindName,
        event: p.event,
        edgeToStampUs: p.stampUs - p.edgeUs,
        edgeToAckMs: p.ackNanos != null ? +((p.ackNanos - p.edgeNanos) / 1e6).toFixed(3) : null,
        buttonToAckMs: p.ackNanos != null ? +((p.ackNanos - p.sentNanos) / 1e6).toFixed(3) : null,
        welcomeToAckMs: p.welcomeNanos != null ? +((p.ackNanos - p.welcomeNanos) / 1e6).toFixed(3) : null,
        accountedMinusEdgeUs: p.accountedMinusEdgeUs,
      })),
      emulatorBehindWallMs: { p50: q(0.5), p99: q(0.99), max: r.maxLagNs / 1e6, maxAtMs: r.maxLagAtMs },
      // How late the units' heartbeats reached the bridge: the daemon's
      // time mapping takes the earliest, so its offset carries this much
      // of the emulator's pacing.
      heartbeatLateUs: Object.values(this.units).flatMap((u) =>
        u.frames.filter((f) => f.dir === 'dev' && f.name === 'DEVICE_HEARTBEAT' && f.lateNs != null).map((f) => Math.round(f.lateNs / 1000)),
      ),
      ...extra,
    };
  }

  /// Checks every press the daemon recorded against the lever edges:
  /// `expect` lists the sides in order. Bound: `boundUs`.
  async accounted(epoch, expect, boundUs) {
    const history = await this.daemon.history();
    const got = presses(history, epoch);
    assert.equal(got.length, expect.length, `presses recorded: ${JSON.stringify(got)}`);
    got.forEach((e, i) => {
      const p = this.pressLog[i];
      assert.equal(e.side, expect[i], `press ${i} side`);
      p.accountedMinusEdgeUs = Math.round(e.monoUs - p.edgeMonoUs);
      assert.ok(
        Math.abs(p.accountedMinusEdgeUs) <= boundUs,
        `press ${i}: recorded at ${e.monoUs} µs, its first edge at ${p.edgeMonoUs.toFixed(0)} µs on the unit's mapping (${p.accountedMinusEdgeUs} µs apart, bound ${boundUs})`,
      );
    });
  }

  async stop() {
    this.realtime.stop();
    let exit = null;
    if (this.daemon) exit = await this.daemon.stop();
    for (const u of Object.values(this.units)) await u.unplug();
    for (const u of Object.values(this.units)) assert.deepEqual(u.pico.faults, [], `${u.kindName}: faults ${u.pico.faults}`);
    return exit;
  }

  cleanup() {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/// How far the daemon's accounted instant may be from the lever's first
/// edge on the unit's emulated-to-monotonic mapping. The daemon's mapping
/// is built from heartbeat arrivals, which come through the bridge late
/// by the emulator's lag behind the wall clock plus the bridge's hops;
/// SPEC 9 allows the host that much. 3 ms bounds it here (the firmware's
/// own part, edge to stamp, is microseconds; the figures show each part).
const ACCOUNTED_BOUND_US = 3000;

export function daemonTests(opts) {
  const tests = [];
  const test = (name, fn) => tests.push({ name, fn });

  test('daemon: buttons + display units play a game to a flag: presses at their first edge, link loss with resend, power cycle, the daemon\'s times on the TM1637s', async () => {
    const rig = new Rig(opts);
    try {
      const buttons = await rig.unit('buttons', 'buttons', 1);
      const display = await rig.unit('display', 'display', 2);
      await rig.start({ control: '8', buttons: buttons.linkPath, displays: [display.linkPath] });
      const d = rig.daemon;
      await waitFor('0:08 on both TM1637 modules', () => display.board.panels.join() === '0:08,0:08', WAIT_MS, () => JSON.stringify(display.board.panels));
      await rig.heartbeatsSettled(buttons);
      await d.call('Start');
      const epoch = (await d.state()).game_epoch_us;
      await waitFor('white\'s clock running on the display', () => display.board.leds.icons[1] && display.board.panels[0] === '0:07', WAIT_MS, () => JSON.stringify(display.board.panels));

      // White presses: black runs (its LED on the button unit and the
      // running LED of the right panel).
      await rig.press(buttons, 0);
      await waitFor('black\'s LED and running icon', () => buttons.board.leds.player[1] && !buttons.board.leds.player[0] && display.board.leds.icons[3] && !display.board.leds.icons[1]);

      // The buttons' link is cut (both ways, the unit stays powered): the
      // daemon loses it after K heartbeats, the unit after T.
      buttons.cut = true;
      await waitFor('the daemon sees the buttons gone', () => d.state().then((s) => connected(s, 'buttons') === false));
      await waitFor('the display shows NO_BUTTONS (its link LED blinks)', () => {
        const f = display.frames.filter((x) => x.dir === 'host' && x.name === 'DISPLAY').at(-1);
        return f && f.fields.left.icons & 0x0200;
      });
      const cutAt = buttons.pico.nanos;
      await waitFor('the unit back in HANDSHAKE', () => buttons.frames.some((f) => f.dir === 'dev' && f.name === 'HELLO' && f.nanos > cutAt));
      const black = await rig.press(buttons, 1, { waitAck: false });
      await waitFor('a HELLO naming the queued press', () =>
        buttons.frames.some((f) => f.dir === 'dev' && f.name === 'HELLO' && f.nanos > black.edgeNanos + 10e6 && f.fields.firstUnackedEvent === 1),
      );
      buttons.cut = false;
      await rig.acked(black);
      assert.ok(black.ackNanos - black.edgeNanos > 100e6, 'the ACK came only after the link was back');
      await waitFor('buttons linked again', () => d.state().then(linked));

      // A power cycle (a bus-powered unit unplugged and plugged back): the
      // PTY hangs up, the chip restarts, the daemon links the new boot.
      await buttons.unplug();
      buttons.pico.powerOn();
      await buttons.plug(buttons.linkPath);
      await waitFor('the new boot linked', () =>
        buttons.frames.some((f) => f.dir === 'host' && f.name === 'WELCOME' && f.boot === 2),
      );
      await waitFor('the daemon sees every unit linked', () => d.state().then(linked));
      await rig.heartbeatsSettled(buttons);
      const white2 = await rig.press(buttons, 0);
      assert.equal(white2.event, 0, 'the new boot numbers its events from 0');

      // Black's clock runs out.
      const flagged = await waitFor('black\'s flag', () => d.state().then((s) => (JSON.stringify(s.flags) === '["black"]' ? s : null)), 15_000);
      assert.equal(flagged.black.remaining_ms, 0);
      const white = clockText(flagged.white.remaining_ms);
      await waitFor(`the display showing ${white} and 0:00 with black's flag LED`, () =>
        display.board.panels.join() === `${white},0:00` && display.board.leds.icons[2], WAIT_MS, () => JSON.stringify([display.board.panels, display.board.leds.icons]),
      );
      assert.ok(!display.board.leds.icons[0], 'white\'s flag did not fall');
      await rig.accounted(epoch, ['white', 'black', 'white'], ACCOUNTED_BOUND_US);
      rig.record('buttons+display', { displayChipUpdates: display.board.chipUpdates });
      const exit = await rig.stop();
      assert.equal(exit?.code, 0, `chessclockd exits cleanly on SIGTERM: ${JSON.stringify(exit)}`);
    } catch (e) {
      await rig.stop().catch(() => {});
      throw new Error(`${e.message}\n--- daemon log (tail) ---\n${rig.daemon?.log().slice(-3000) ?? ''}`);
    } finally {
      rig.cleanup();
    }
  });

  test('daemon: a combined unit (buttons and panels on one port) with a MAX7219 display and a one-panel display facing White; its cable out and back in with a press meanwhile', async () => {
    const rig = new Rig(opts);
    try {
      const combined = await rig.unit('combined', 'combined', 3);
      const max = await rig.unit('max', 'display-max7219', 4);
      const one = await rig.unit('one', 'one-panel', 5);
      await rig.start({
        control: '60',
        buttons: combined.linkPath,
        displays: [combined.linkPath, max.linkPath, { device: one.linkPath, side: 'white' }],
      });
      const d = rig.daemon;
      await waitFor('1:00 everywhere', () =>
        combined.board.panels.join() === '1:00,1:00' && max.board.panels.join() === '1.00,1.00' && one.board.panels.join() === '1:00',
        WAIT_MS, () => JSON.stringify([combined.board.panels, max.board.panels, one.board.panels]),
      );
      await rig.heartbeatsSettled(combined);
      await d.call('Start');
      const epoch = (await d.state()).game_epoch_us;
      await waitFor('white\'s clock counting on the one-panel unit', () => one.board.panels[0] === '0:59');
      await rig.press(combined, 0);
      await waitFor('black running', () => combined.board.leds.icons[3] && combined.board.leds.player[1]);
      // The combined unit runs on batteries: its cable out (the PTY hangs
      // up, no host on its bus), black presses, the cable back in (a new
      // enumeration, a new PTY at the same link): the same boot, so the
      // daemon keeps its time mapping and the press is placed at its edge.
      combined.usb.detach();
      await combined.unplug();
      await waitFor('the daemon sees the combined unit gone', () => d.state().then((s) => connected(s, 'buttons') === false));
      const black = await rig.press(combined, 1, { waitAck: false });
      await waitFor('the press made on the unplugged unit', () => combined.board.edges.some((e) => e.nanos >= black.edgeNanos));
      await combined.plug(combined.linkPath);
      combined.usb.reattach();
      await rig.acked(black);
      assert.equal(combined.frames.filter((f) => f.dir === 'dev' && f.name === 'HELLO').at(-1).boot, 1, 'no new boot');
      await d.call('Pause');
      const s = await d.state();
      const w = clockText(s.white.remaining_ms);
      const b = clockText(s.black.remaining_ms);
      await waitFor('the paused times on all three', () =>
        combined.board.panels.join() === `${w},${b}` && max.board.panels.join() === `${w},${b}`.replaceAll(':', '.') && one.board.panels.join() === w && combined.board.leds.icons[4],
        WAIT_MS, () => JSON.stringify([w, b, combined.board.panels, max.board.panels, one.board.panels]),
      );
      await rig.accounted(epoch, ['white', 'black'], ACCOUNTED_BOUND_US);
      rig.record('combined+max7219+one-panel');
      const exit = await rig.stop();
      assert.equal(exit?.code, 0);
    } catch (e) {
      await rig.stop().catch(() => {});
      throw new Error(`${e.message}\n--- daemon log (tail) ---\n${rig.daemon?.log().slice(-3000) ?? ''}`);
    } finally {
      rig.cleanup();
    }
  });

  test('daemon: a combined MAX7219 unit alone on its board', async () => {
    const rig = new Rig(opts);
    try {
      const unit = await rig.unit('cm', 'combined-max7219', 6);
      await rig.start({ control: '60', buttons: unit.linkPath, displays: [unit.linkPath] });
      const d = rig.daemon;
      await waitFor('1.00 on both MAX7219 modules', () => unit.board.panels.join() === '1.00,1.00', WAIT_MS, () => JSON.stringify(unit.board.panels));
      await rig.heartbeatsSettled(unit);
      await d.call('Start');
      const epoch = (await d.state()).game_epoch_us;
      await rig.press(unit, 0);
      await d.call('Pause');
      const s = await d.state();
      const text = `${clockText(s.white.remaining_ms)},${clockText(s.black.remaining_ms)}`.replaceAll(':', '.');
      await waitFor('the paused times', () => unit.board.panels.join() === text, WAIT_MS, () => JSON.stringify([text, unit.board.panels]));
      await rig.accounted(epoch, ['white'], ACCOUNTED_BOUND_US);
      rig.record('combined-max7219');
      const exit = await rig.stop();
      assert.equal(exit?.code, 0);
    } catch (e) {
      await rig.stop().catch(() => {});
      throw new Error(`${e.message}\n--- daemon log (tail) ---\n${rig.daemon?.log().slice(-3000) ?? ''}`);
    } finally {
      rig.cleanup();
    }
  });

  return tests;
}
