// A scripted host for tests on the emulator's own clock (no daemon, no
// wall time): it answers HELLO with WELCOME, sends HOST_HEARTBEAT every
// heartbeat interval, ACKs BUTTON events when told to, and can send any
// frame. Everything happens at exact emulated instants, so a test can step
// time and check the firmware against SPEC.md's numbers.

import { encodeFrame, ID } from './protocol.js';

function u16(v) {
  return [v & 0xff, (v >> 8) & 0xff];
}

function str(s) {
  const b = Buffer.from(s, 'utf8');
  return [b.length, ...b];
}

/// A DISPLAY payload (SPEC 5.7) from { left, right, text, brightness },
/// panels as { time, icons, moves, stage }.
export function displayPayload({ left, right, text = '', brightness = 255 }) {
  const panel = (p) => [...str(p.time ?? ''), ...u16(p.icons ?? 0), ...u16(p.moves ?? 0xffff), p.stage ?? 0];
  return [...panel(left), ...panel(right), ...str(text), brightness];
}

export class HostPeer {
  constructor(unit, { heartbeatMs = 250, linkTimeoutMs = 1000, autoAck = true } = {}) {
    this.unit = unit;
    this.heartbeatMs = heartbeatMs;
    this.linkTimeoutMs = linkTimeoutMs;
    this.autoAck = autoAck;
    this.seq = 0;
    this.silent = false; // a host that went away: answers nothing
    this.welcomes = 0;
    unit.listeners.push((f) => this.onFrame(f));
    this.scheduleHeartbeat();
    // A power cycle is a new chip with a new clock: the host's timer goes on.
    unit.pico.onPowerOn.push(() => this.scheduleHeartbeat());
  }

  send(id, payload = []) {
    if (this.silent) return;
    this.unit.hostWrite(encodeFrame(id, this.seq++, payload));
  }

  /// A new host session on the port (a reopen, a replug): as SPEC 6.1
  /// item 4 says, nothing is sent and every frame but HELLO is ignored
  /// until a HELLO has been answered.
  newSession() {
    this.welcomes = 0;
  }

  onFrame(f) {
    if (f.dir !== 'dev' || this.silent) return;
    if (f.name !== 'HELLO' && this.welcomes === 0) return;
    if (f.name === 'HELLO') {
      this.welcomes++;
      this.send(ID.WELCOME, [1, ...u16(this.heartbeatMs), ...u16(this.linkTimeoutMs)]);
      this.onWelcome?.();
    } else if (f.name === 'BUTTON' && this.autoAck) {
      this.send(ID.ACK, u16(f.fields.event));
    }
  }

  scheduleHeartbeat() {
    const pico = this.unit.pico;
    const boot = pico.boots;
    pico.at(pico.nanos + this.heartbeatMs * 1e6, () => {
      if (pico.boots !== boot) return;
      if (this.welcomes > 0) this.send(ID.HOST_HEARTBEAT);
      this.scheduleHeartbeat();
    });
  }

  display(d) {
    this.send(ID.DISPLAY, displayPayload(d));
  }
}
