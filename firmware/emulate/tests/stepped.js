// The UF2s on the emulator's own clock, against a scripted host: every
// instant below is exact emulated time, so each check is repeatable and
// states SPEC.md's numbers (HELLO every 500 ms, heartbeats every H, link
// timeout T, resends every 100 ms, the 5 ms debounce) against the binary.

import assert from 'node:assert/strict';
import { Unit, KINDS } from '../lib/unit.js';
import { HostPeer } from '../lib/hostpeer.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ID, FrameReader, encodeFrame } from '../lib/protocol.js';
import { PIN } from '../lib/board.js';

const MS = 1000; // µs
const ROLE_BITS = { buttons: 1, display: 2, combined: 3 };

/// A distinct flash id per unit: the serial is its hex.
function uniqueId(n) {
  return [0xc1, 0x0c, 0x4e, 0x00, 0x00, 0x00, 0x10, n];
}

function hex(bytes) {
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join('').toUpperCase();
}

function noFaults(unit) {
  assert.deepEqual(unit.pico.faults, [], `the chip reported faults: ${unit.pico.faults.join('; ')}`);
}

function devFrames(unit, name, fromNanos = 0) {
  return unit.frames.filter((f) => f.dir === 'dev' && f.name === name && f.nanos >= fromNanos);
}

function intervalsMs(frames) {
  const out = [];
  for (let i = 1; i < frames.length; i++) out.push((frames[i].nanos - frames[i - 1].nanos) / 1e6);
  return out;
}

/// Runs until `cond()` holds or `limitUs` of emulated time passed, in
/// steps of `stepUs`; returns whether it held.
function runUntil(unit, cond, limitUs, stepUs = 1000) {
  const end = unit.pico.nanos + limitUs * 1000;
  while (unit.pico.nanos < end) {
    if (cond()) return true;
    unit.runFor(stepUs);
  }
  return cond();
}

export function steppedTests({ uf2Dir, figures }) {
  const tests = [];
  const test = (name, fn) => tests.push({ name, fn });
  let n = 0;
  const make = (kind, opts = {}) => new Unit({ kind, uf2Dir, uniqueId: uniqueId(++n), seed: n, ...opts });

  // The frames the tests read are decoded by lib/protocol.js: it must read
  // the SPEC's own vectors as the SPEC says.
  test('the harness reads the protocol vectors as SPEC.md does (frames, ids, sequence numbers, errors)', () => {
    const file = fileURLToPath(new URL('../../../protocol/vectors/vectors.json', import.meta.url));
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    const bytes = (h) => Uint8Array.from(h.trim().split(/\s+/).filter(Boolean).map((x) => parseInt(x, 16)));
    const decode = (wire) => {
      const out = [];
      new FrameReader((f) => out.push(f)).push(bytes(wire));
      return out;
    };
    assert.ok(doc.valid.length > 20 && doc.invalid.length > 10);
    for (const v of doc.valid) {
      const [f] = decode(v.wire);
      assert.ok(f && !f.error, `${v.name}: decoded (${JSON.stringify(f)})`);
      assert.equal(f.id, v.id, `${v.name}: id`);
      assert.equal(f.seq, v.seq, `${v.name}: seq`);
      const raw = bytes(v.raw);
      const again = encodeFrame(raw[0], raw[1], raw.subarray(2, raw.length - 4));
      assert.deepEqual([...again], [...bytes(v.wire)], `${v.name}: encodes back to the same wire bytes`);
    }
    for (const v of doc.invalid) {
      const got = decode(v.wire).map((f) => f.error);
      assert.ok(got.includes(v.error), `${v.name}: ${v.error} expected, got ${JSON.stringify(got)}`);
    }
  });

  for (const [kind, k] of Object.entries(KINDS)) {
    test(`${kind}: boots, enumerates with SPEC section 1's identity and says HELLO every 500 ms`, () => {
      const id = uniqueId(0x40 + Object.keys(KINDS).indexOf(kind));
      const u = new Unit({ kind, uf2Dir, uniqueId: id, seed: 7 });
      u.runFor(1100 * MS);
      noFaults(u);
      const e = u.enumerated;
      assert.ok(e, 'the host finished enumerating it');
      assert.equal(e.idVendor, 0x1209, 'idVendor is pid.codes');
      assert.equal(e.idProduct, 0x0001, 'idProduct is the test PID of an unconfigured build');
      assert.equal(e.deviceClass, 0x02, 'device class CDC');
      assert.ok(e.interfaces.some((i) => i.class === 0x02 && i.subClass === 0x02), 'a CDC ACM control interface');
      assert.ok(e.interfaces.some((i) => i.class === 0x0a), 'a CDC data interface');
      assert.equal(e.interfaces.length, 2, 'one interface pair, nothing else');
      assert.ok(e.bulkIn > 0 && e.bulkOut > 0, 'bulk IN and OUT endpoints');
      assert.equal(e.strings.product, `chessclock ${k.role}`);
      const hellos = devFrames(u, 'HELLO');
      assert.ok(hellos.length >= 3, `3 HELLOs in 1.1 s, got ${hellos.length}`);
      const h = hellos[0].fields;
      assert.equal(h.serial, hex(id), 'the serial is the flash unique id in hex');
      assert.equal(e.strings.serial, `${k.role}-${h.serial}`, 'iSerialNumber is <role>-<HELLO serial>');
      assert.equal(e.strings.manufacturer, h.vendor, 'iManufacturer is the HELLO vendor');
      assert.equal(u.pico.uniqueIdReads, 1, 'the id came from one flash Read Unique ID command');
      assert.equal(h.protocolVersion, 1);
      assert.equal(h.roles, ROLE_BITS[k.role]);
      assert.equal(h.displays, k.panels, 'panels');
      assert.equal(h.digits, k.display ? (k.chip === 'max7219' ? 8 : 4) : 0, 'digits per panel');
      assert.equal(h.brightnessLevels, k.display ? (k.chip === 'max7219' ? 16 : 8) : 0, 'brightness levels');
      assert.equal(!!(h.flags & 0x04), k.buttons, 'the arbiter flag iff it has buttons');
      // SPEC 8.2: a display SHOULD have FLAG, RUNNING, PAUSED and LINK_LOST,
      // and SHOULD show NO_BUTTONS; a button unit announces no icons.
      const SHOULD = 0x0001 | 0x0008 | 0x0010 | 0x0020 | 0x0200;
      if (k.display) assert.equal(h.icons & SHOULD, SHOULD, `icons 0x${h.icons.toString(16)}`);
      else assert.equal(h.icons, 0);
      assert.equal(h.firstUnackedEvent, 0);
      for (const gap of intervalsMs(hellos)) {
        assert.ok(Math.abs(gap - 500) < 0.5, `HELLO interval ${gap} ms, SPEC says 500`);
      }
      // Core 1 runs only where there are levers to watch.
      assert.equal(u.pico.core1Running, k.buttons, 'core 1 started iff the kind has buttons');
      // Unlinked: the link LEDs are lit (link lost).
      assert.deepEqual(u.board.leds.link, [true, true], 'link LEDs on while unlinked');
      figures.boot ??= {};
      figures.boot[kind] = { firstHelloMs: hellos[0].nanos / 1e6, enumeratedMs: e.atMicros / 1000 };
    });
  }

  test('two power-ups of one unit have different boot_ids (ROSC random bit), same serial', () => {
    const u = make('display');
    u.runFor(20 * MS);
    const first = devFrames(u, 'HELLO')[0].fields;
    u.pico.powerOn();
    u.runFor(20 * MS);
    const hellos = devFrames(u, 'HELLO');
    const second = hellos[hellos.length - 1].fields;
    assert.equal(second.serial, first.serial);
    assert.notEqual(second.bootId, first.bootId, 'boot_id must differ per power-up (SPEC 7.1)');
    noFaults(u);
  });

  test('buttons: WELCOME links it; heartbeats at once and every H from the WELCOME, stamped with the device clock', () => {
    const u = make('buttons');
    // Core 0's busy share (cycles executed against cycles elapsed) with no
    // USB host yet, then linked and idle: a figure, see README "Findings".
    const busy = (us) => {
      const c = u.pico.core0.cycles;
      const t = u.pico.nanos;
      u.runFor(us);
      return (u.pico.core0.cycles - c) / ((u.pico.nanos - t) / 8);
    };
    u.usb.usb.onUSBEnabled = () => {}; // no host on the bus yet
    const unconfigured = busy(20 * MS);
    u.usb.usb.resetDevice(); // the host arrives: bus reset, enumeration
    const host = new HostPeer(u, { heartbeatMs: 100, linkTimeoutMs: 400 });
    u.runFor(700 * MS);
    figures.core0Busy = { usbUnconfigured: +unconfigured.toFixed(3), linkedIdle: +busy(1000 * MS).toFixed(5) };
    noFaults(u);
    const welcome = u.frames.find((f) => f.dir === 'host' && f.name === 'WELCOME');
    assert.ok(welcome, 'the host welcomed it');
    const beats = devFrames(u, 'DEVICE_HEARTBEAT');
    assert.ok(beats.length >= 6, `heartbeats: ${beats.length}`);
    assert.ok(beats[0].nanos - welcome.nanos < 200_000, 'the first heartbeat follows the WELCOME at once');
    for (const gap of intervalsMs(beats)) assert.ok(Math.abs(gap - 100) < 0.5, `heartbeat interval ${gap} ms, WELCOME said 100`);
    for (const b of beats) {
      const lag = b.nanos / 1000 - b.fields.deviceTimeUs;
      assert.ok(lag >= 0 && lag < 200, `heartbeat stamp ${b.fields.deviceTimeUs} µs, seen at ${b.nanos / 1000} µs`);
    }
    assert.equal(devFrames(u, 'HELLO').length, 1, 'no more HELLO once linked');
    assert.deepEqual(u.board.leds.link, [false, false], 'link LEDs off while linked');
    host.silent = true;
  });

  test('buttons: a bouncing press is stamped at its first edge, sent 5 ms after the last bounce; a 1 ms spike is no press', () => {
    const u = make('buttons');
    const host = new HostPeer(u);
    u.runFor(300 * MS);
    u.board.glitch(0, { us: 1000 });
    u.runFor(30 * MS);
    assert.equal(devFrames(u, 'BUTTON').length, 0, 'a 1 ms spike must not become a press');
    const presses = [];
    for (const button of [0, 1, 2]) {
      const at = u.pico.nanos + 1000 * 1000;
      const edgeUs = u.board.press(button, { atNanos: at, bounceUs: 1400, stepUs: 350 });
      u.runFor(150 * MS);
      presses.push({ button, edgeUs, lastBounceUs: edgeUs + 1400 });
    }
    noFaults(u);
    const buttons = devFrames(u, 'BUTTON');
    assert.equal(buttons.length, 3, `one BUTTON per press, no release events: ${buttons.map((b) => JSON.stringify(b.fields))}`);
    const stamps = [];
    buttons.forEach((b, i) => {
      const p = presses[i];
      assert.equal(b.fields.event, i, 'events numbered from 0');
      assert.equal(b.fields.button, p.button, 'left, right, arbiter');
      assert.equal(b.fields.pressed, true);
      const edgeToStamp = b.fields.deviceTimeUs - p.edgeUs;
      assert.ok(edgeToStamp >= 0 && edgeToStamp <= 50, `stamp ${b.fields.deviceTimeUs} µs, first edge ${p.edgeUs} µs`);
      const sentAfterSettle = b.nanos / 1000 - p.lastBounceUs;
      assert.ok(sentAfterSettle >= 5000 && sentAfterSettle < 5500, `sent ${sentAfterSettle} µs after the last bounce (debounce 5 ms)`);
      stamps.push({ edgeToStampUs: edgeToStamp, edgeToSendUs: b.nanos / 1000 - p.edgeUs });
    });
    const acks = u.frames.filter((f) => f.dir === 'host' && f.name === 'ACK');
    assert.equal(acks.length, 3);
    figures.stepped = { presses: stamps };
    host.silent = true;
  });

  test('buttons: an unacknowledged press is resent every 100 ms with the same number and stamp until ACKed', () => {
    const u = make('buttons');
    const host = new HostPeer(u, { autoAck: false });
    u.runFor(300 * MS);
    const edgeUs = u.board.press(1);
    u.runFor(420 * MS);
    const sent = devFrames(u, 'BUTTON');
    assert.ok(sent.length >= 4, `resends: ${sent.length}`);
    for (const b of sent) {
      assert.equal(b.fields.event, 0);
      assert.equal(b.fields.deviceTimeUs, sent[0].fields.deviceTimeUs, 'a resend carries the same stamp');
    }
    assert.ok(sent[0].fields.deviceTimeUs - edgeUs <= 50);
    for (const gap of intervalsMs(sent)) assert.ok(Math.abs(gap - 100) < 1, `resend interval ${gap} ms, SPEC says 100`);
    host.send(ID.ACK, [0, 0]);
    const acked = u.pico.nanos;
    u.runFor(300 * MS);
    assert.equal(devFrames(u, 'BUTTON', acked + 1000).length, 0, 'no resend after the ACK');
    noFaults(u);
    host.silent = true;
  });

  test('buttons: link loss after T: HELLO again, presses kept and sent after the next WELCOME, still stamped at their edge', () => {
    const u = make('buttons');
    const host = new HostPeer(u, { heartbeatMs: 250, linkTimeoutMs: 1000 });
    u.runFor(400 * MS);
    host.silent = true;
    const lastHostFrame = u.frames.filter((f) => f.dir === 'host').at(-1).nanos;
    const ok = runUntil(u, () => devFrames(u, 'HELLO', lastHostFrame).length > 0, 1500 * MS);
    assert.ok(ok, 'HELLO after the link timeout');
    const hello = devFrames(u, 'HELLO', lastHostFrame)[0];
    const silenceMs = (hello.nanos - lastHostFrame) / 1e6;
    assert.ok(silenceMs >= 1000 && silenceMs < 1001, `HELLO ${silenceMs} ms after the last host frame (T = 1000 ms)`);
    assert.deepEqual(u.board.leds.link, [true, true], 'link LEDs on: link lost');
    // Pressed while the host is away: queued, not sent in HANDSHAKE.
    const edgeUs = u.board.press(0);
    u.runFor(600 * MS);
    assert.equal(devFrames(u, 'BUTTON').length, 0, 'no BUTTON before a WELCOME');
    const hellos = devFrames(u, 'HELLO', lastHostFrame);
    assert.equal(hellos.at(-1).fields.firstUnackedEvent, 0, 'HELLO names the queued event');
    host.silent = false;
    runUntil(u, () => devFrames(u, 'BUTTON').length > 0, 1000 * MS);
    const b = devFrames(u, 'BUTTON')[0];
    assert.ok(b, 'the queued press is sent after the WELCOME');
    const welcome = u.frames.filter((f) => f.dir === 'host' && f.name === 'WELCOME').at(-1);
    const beat = devFrames(u, 'DEVICE_HEARTBEAT', welcome.nanos)[0];
    assert.ok(beat && beat.nanos <= b.nanos, 'DEVICE_HEARTBEAT first, then the queued event (SPEC 6.1.5)');
    assert.ok(b.fields.deviceTimeUs - edgeUs <= 50, 'stamped at its first edge, not at the resend');
    u.runFor(300 * MS);
    assert.equal(devFrames(u, 'BUTTON').length, 1, 'ACKed at once, no resend');
    noFaults(u);
    host.silent = true;
  });

  test('buttons: a host that stops reading (NAKs bulk IN for 400 ms): the firmware times out its writes, stays linked, and the press made meanwhile arrives after, stamped at its edge, nothing garbled', () => {
    const u = make('buttons');
    const host = new HostPeer(u);
    u.runFor(300 * MS);
    u.usb.setReading(false);
    const paused = u.pico.nanos;
    const edgeUs = u.board.press(0);
    u.runFor(400 * MS);
    assert.ok(u.usb.naks >= 1, 'the host NAKed');
    assert.equal(devFrames(u, 'BUTTON').length, 0, 'nothing crossed while the host did not read');
    u.usb.setReading(true);
    const resumed = u.pico.nanos;
    u.runFor(400 * MS);
    const b = devFrames(u, 'BUTTON');
    assert.equal(b.length, 1, 'the press, once');
    assert.ok(b[0].nanos - resumed < 1_000_000, 'delivered as soon as the host reads again');
    assert.ok(b[0].fields.deviceTimeUs - edgeUs <= 50, 'stamped at its first edge');
    assert.ok(devFrames(u, 'DEVICE_HEARTBEAT', resumed).length >= 1, 'heartbeats again after the pause');
    assert.equal(devFrames(u, 'HELLO', paused).length, 0, 'the link held: the host kept sending');
    assert.deepEqual(u.frames.filter((f) => f.dir === 'dev' && f.error), [], 'no refused frame from the device');
    noFaults(u);
    host.silent = true;
  });

  test('buttons: a battery unit\'s cable out for 600 ms and back: re-enumerated, the same boot says HELLO, its queued press is ACKed with its first-edge stamp', () => {
    const u = make('buttons');
    const host = new HostPeer(u);
    u.runFor(300 * MS);
    const boot = devFrames(u, 'HELLO')[0].fields.bootId;
    u.usb.detach();
    const lastHost = u.frames.filter((f) => f.dir === 'host').at(-1).nanos;
    const edgeUs = u.board.press(0);
    u.runFor(600 * MS);
    host.newSession();
    u.usb.reattach();
    const back = u.pico.nanos;
    runUntil(u, () => devFrames(u, 'HELLO', back).length > 0, 2000 * MS);
    assert.ok(u.enumerated && u.enumerated.atMicros * 1000 > back, 'enumerated again');
    const hello = devFrames(u, 'HELLO', back)[0];
    assert.ok(hello, 'HELLO after the replug');
    assert.equal(hello.fields.bootId, boot, 'the same boot: the chip kept its power');
    assert.equal(hello.fields.firstUnackedEvent, 0, 'HELLO names the queued press');
    // SPEC 3 lets a device take a USB reset for "host gone"; when it does
    // not, the link timeout T brings the HELLO. Either is within T of the
    // host's last frame or of the replug.
    const helloAfterMs = (hello.nanos - Math.max(lastHost, back)) / 1e6;
    assert.ok(helloAfterMs <= 1001, `HELLO ${helloAfterMs} ms after the replug or the last host frame`);
    figures.replug = { usbResetToHelloMs: +((hello.nanos - back) / 1e6).toFixed(1), lastHostFrameToHelloMs: +((hello.nanos - lastHost) / 1e6).toFixed(1) };
    runUntil(u, () => u.frames.some((f) => f.dir === 'host' && f.name === 'ACK'), 1000 * MS);
    const sent = devFrames(u, 'BUTTON', hello.nanos);
    assert.ok(sent.length >= 1, 'the press sent after the WELCOME');
    assert.ok(sent[0].fields.deviceTimeUs - edgeUs <= 50, 'with its first-edge stamp');
    assert.ok(u.frames.some((f) => f.dir === 'host' && f.name === 'ACK' && f.nanos > hello.nanos), 'and ACKed');
    noFaults(u);
    host.silent = true;
  });

  test('buttons: a power cycle is a new boot: new boot_id, event numbers and the device clock restart', () => {
    const u = make('buttons');
    const host = new HostPeer(u);
    u.runFor(300 * MS);
    u.board.press(0);
    u.runFor(100 * MS);
    const before = devFrames(u, 'HELLO')[0].fields;
    assert.equal(devFrames(u, 'BUTTON').length, 1);
    u.pico.powerOn();
    u.runFor(300 * MS);
    const after = u.frames.filter((f) => f.dir === 'dev' && f.name === 'HELLO' && f.boot === 2)[0];
    assert.ok(after, 'HELLO from the new boot');
    assert.notEqual(after.fields.bootId, before.bootId);
    assert.equal(after.fields.firstUnackedEvent, 0);
    assert.ok(after.fields && after.nanos < 20_000_000, 'the new boot says HELLO within 20 ms of power-on');
    const edgeUs = u.board.press(1);
    u.runFor(100 * MS);
    const b = u.frames.filter((f) => f.dir === 'dev' && f.name === 'BUTTON' && f.boot === 2)[0];
    assert.ok(b, 'a press of the new boot');
    assert.equal(b.fields.event, 0, 'event numbers restart at 0');
    assert.ok(b.fields.deviceTimeUs < 1_000_000 && b.fields.deviceTimeUs >= edgeUs, 'the clock restarted at power-on');
    noFaults(u);
    host.silent = true;
  });

  for (const kind of ['display', 'display-max7219', 'one-panel', 'combined', 'combined-max7219']) {
    const k = KINDS[kind];
    test(`${kind}: DISPLAY frames reach the ${k.chip.toUpperCase()} modules (read back from the pins), with brightness and icons`, () => {
      const u = make(kind);
      const host = new HostPeer(u);
      u.runFor(300 * MS);
      const sep = k.chip === 'max7219' ? '.' : ':';
      const expect = (texts) => texts.slice(0, k.panels).map((t) => t.replace(':', sep));
      // How long the firmware bit-bangs one picture (its delays are timer
      // busy-waits, so this is the chip's figure too).
      const chipPins = new Set([...PIN.tm1637.flatMap((m) => [m.clk, m.dio]), PIN.max7219.din, PIN.max7219.clk, PIN.max7219.cs]);
      const busEdges = [];
      u.pico.pinListeners.push((pin, high, nanos) => chipPins.has(pin) && busEdges.push(nanos));
      const sentAt = u.pico.nanos;
      // RUNNING (0x0008, SPEC 8.2) on the right panel, brightness 255: the
      // brightest level.
      host.display({ left: { time: '1:00' }, right: { time: '0:59', icons: 0x0008 }, brightness: 255 });
      u.runFor(50 * MS);
      assert.deepEqual(u.board.panels, expect(['1:00', '0:59']));
      figures.displayUpdate ??= {};
      figures.displayUpdate[kind] = {
        frameToFirstEdgeUs: +((busEdges[0] - sentAt) / 1000).toFixed(1),
        busyMs: +((busEdges.at(-1) - busEdges[0]) / 1e6).toFixed(3),
      };
      if (k.chip === 'tm1637') {
        assert.deepEqual(u.board.tm.slice(0, k.panels).map((c) => c.brightness), new Array(k.panels).fill(7));
      } else {
        assert.deepEqual(u.board.max.modules.map((m) => m.intensity), new Array(k.panels).fill(15));
        assert.equal(u.board.max.badLatches, 0, 'every MAX7219 latch had 16 bits per module');
      }
      const icons = u.board.leds.icons;
      if (k.panels === 2) assert.deepEqual(icons.slice(0, 4), [false, false, false, true], 'right running LED');
      host.display({ left: { time: '10:00' }, right: { time: '0:05' }, brightness: 0 });
      u.runFor(50 * MS);
      assert.deepEqual(u.board.panels, expect(['10:00', '0:05']));
      const before = u.board.chipUpdates;
      host.display({ left: { time: '10:00' }, right: { time: '0:05' }, brightness: 0 });
      u.runFor(50 * MS);
      assert.equal(u.board.chipUpdates, before, 'the same picture again writes nothing to the chips');
      // Host gone: the last times stay, link LEDs on.
      host.silent = true;
      u.runFor(1300 * MS);
      assert.deepEqual(u.board.panels, expect(['10:00', '0:05']), 'the last picture stays after a link loss');
      assert.deepEqual(u.board.leds.link, [true, true]);
      noFaults(u);
    });
  }

  test('display: BEEP sounds the buzzer pin for its pattern to the microsecond; the alarm switch (GP14 to ground) silences it', () => {
    const u = make('display');
    const host = new HostPeer(u);
    u.runFor(300 * MS);
    const edges = [];
    u.pico.pinListeners.push((pin, high, nanos) => pin === PIN.buzzer && edges.push({ high, us: nanos / 1000 }));
    host.send(ID.BEEP, [100, 0, 2]); // 100 ms, twice
    const sent = u.pico.micros;
    u.runFor(500 * MS);
    assert.deepEqual(edges.map((e) => e.high), [true, false, true, false], JSON.stringify(edges));
    const t = edges.map((e) => e.us - edges[0].us);
    for (const [i, want] of [0, 100_000, 200_000, 300_000].entries()) {
      assert.ok(Math.abs(t[i] - want) <= 50, `buzzer edge ${i} at +${t[i]} µs, want +${want}`);
    }
    assert.ok(edges[0].us - sent < 200, 'the first beep starts when the BEEP arrives');
    edges.length = 0;
    u.pico.drive(PIN.mute, false);
    u.runFor(10 * MS);
    host.send(ID.BEEP, [100, 0, 2]);
    u.runFor(500 * MS);
    assert.deepEqual(edges, [], 'muted: the buzzer stays off');
    noFaults(u);
    host.silent = true;
  });

  test('buttons: LEDS lights the player and arbiter LEDs (GP6-GP8)', () => {
    const u = make('buttons');
    const host = new HostPeer(u);
    u.runFor(300 * MS);
    host.send(ID.LEDS, [0x05]);
    u.runFor(5 * MS);
    assert.deepEqual(u.board.leds.player, [true, false, true]);
    host.send(ID.LEDS, [0x02]);
    u.runFor(5 * MS);
    assert.deepEqual(u.board.leds.player, [false, true, false]);
    noFaults(u);
    host.silent = true;
  });

  test('buttons: a low supply (VSYS 3.3 V on ADC3) is reported in heartbeats and lights the low-power LED; 5 V clears it', () => {
    const u = make('buttons');
    u.pico.setVsys(3300);
    const host = new HostPeer(u);
    u.runFor(1500 * MS);
    const low = devFrames(u, 'DEVICE_HEARTBEAT').at(-1);
    assert.equal(low.fields.status & 1, 1, 'heartbeat status: low power');
    assert.equal(u.board.leds.lowPower, true, 'low-power LED (GP28) on');
    u.pico.setVsys(5000);
    const back = u.pico.nanos;
    u.runFor(1500 * MS);
    const beats = devFrames(u, 'DEVICE_HEARTBEAT', back);
    assert.equal(beats.at(-1).fields.status & 1, 0, 'heartbeat status clear again');
    assert.equal(u.board.leds.lowPower, false);
    noFaults(u);
    host.silent = true;
  });

  test('combined: its levers and its panels on one port (both cores busy: bit-banging and a press at once)', () => {
    const u = make('combined');
    const host = new HostPeer(u);
    u.runFor(300 * MS);
    // The press lands while core 0 writes both TM1637 modules.
    host.display({ left: { time: '5:00' }, right: { time: '5:00' } });
    const edgeUs = u.board.press(0, { atNanos: u.pico.nanos + 200_000 });
    u.runFor(100 * MS);
    const b = devFrames(u, 'BUTTON')[0];
    assert.ok(b, 'the press is reported');
    assert.ok(b.fields.deviceTimeUs - edgeUs <= 50, `stamped ${b.fields.deviceTimeUs - edgeUs} µs after its edge while core 0 bit-bangs`);
    assert.deepEqual(u.board.panels, ['5:00', '5:00']);
    noFaults(u);
    host.silent = true;
  });

  return tests;
}

export { PIN };
