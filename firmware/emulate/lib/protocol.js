// A reading of protocol/SPEC.md (sections 4 and 5), enough to watch the
// bytes between the daemon and the emulated firmware: COBS framing with a
// 0x00 delimiter, CRC-32/ISO-HDLC appended little-endian, and the payload
// layouts of the messages. Written from the SPEC alone, like the Python
// checker beside the vectors, so it is a second opinion on the firmware's
// frames, not a copy of the Rust decoder.

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) {
      c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    }
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) {
    c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  }
  return (c ^ 0xffffffff) >>> 0;
}

/// COBS decode of one frame's bytes (without its delimiter); null if the
/// stuffing is invalid.
export function cobsDecode(bytes) {
  const out = [];
  let i = 0;
  while (i < bytes.length) {
    const code = bytes[i];
    // A code byte pointing past the end is invalid (SPEC 4.4, rule 3).
    if (code === 0 || i + code > bytes.length) return null;
    for (let k = 1; k < code; k++) {
      out.push(bytes[i + k]);
    }
    i += code;
    if (code < 0xff && i < bytes.length) {
      out.push(0);
    }
  }
  return Uint8Array.from(out);
}

export function cobsEncode(bytes) {
  const out = [0];
  let codeAt = 0;
  let code = 1;
  for (const b of bytes) {
    if (b === 0) {
      out[codeAt] = code;
      codeAt = out.length;
      out.push(0);
      code = 1;
    } else {
      out.push(b);
      code++;
      if (code === 0xff) {
        out[codeAt] = code;
        codeAt = out.length;
        out.push(0);
        code = 1;
      }
    }
  }
  out[codeAt] = code;
  return Uint8Array.from(out);
}

/// A whole frame on the wire: COBS(id, seq, payload, CRC) and 0x00.
export function encodeFrame(id, seq, payload = []) {
  const body = Uint8Array.from([id, seq & 0xff, ...payload]);
  const crc = crc32(body);
  const decoded = Uint8Array.from([...body, crc & 0xff, (crc >>> 8) & 0xff, (crc >>> 16) & 0xff, crc >>> 24]);
  return Uint8Array.from([...cobsEncode(decoded), 0]);
}

export const ID = {
  HELLO: 0x01,
  BUTTON: 0x02,
  DEVICE_HEARTBEAT: 0x03,
  NAK: 0x40,
  WELCOME: 0x81,
  ACK: 0x82,
  DISPLAY: 0x83,
  LEDS: 0x84,
  BEEP: 0x85,
  HOST_HEARTBEAT: 0x86,
};
const NAMES = Object.fromEntries(Object.entries(ID).map(([k, v]) => [v, k]));

class Reader {
  constructor(bytes) {
    this.b = bytes;
    this.i = 0;
  }
  need(n) {
    if (this.i + n > this.b.length) throw new Error('short payload');
  }
  u8() {
    this.need(1);
    return this.b[this.i++];
  }
  u16() {
    this.need(2);
    const v = this.b[this.i] | (this.b[this.i + 1] << 8);
    this.i += 2;
    return v;
  }
  u32() {
    return (this.u16() | (this.u16() << 16)) >>> 0;
  }
  u64() {
    const lo = this.u32();
    const hi = this.u32();
    return hi * 2 ** 32 + lo;
  }
  bool() {
    const v = this.u8();
    if (v > 1) throw new Error(`boolean byte ${v}`);
    return v === 1;
  }
  str(max) {
    const n = this.u8();
    if (n > max) throw new Error(`string of ${n} bytes (max ${max})`);
    this.need(n);
    // Not UTF-8 is Malformed (SPEC 4.4, rule 6).
    const s = new TextDecoder('utf-8', { fatal: true }).decode(this.b.subarray(this.i, this.i + n));
    this.i += n;
    return s;
  }
  end() {
    if (this.i !== this.b.length) throw new Error(`${this.b.length - this.i} bytes past the payload`);
  }
}

function panel(r) {
  return { time: r.str(10), icons: r.u16(), moves: r.u16(), stage: r.u8() };
}

/// The fields of a decoded frame's payload, by message id.
export function parsePayload(id, payload) {
  const r = new Reader(payload);
  let m;
  switch (id) {
    case ID.HELLO:
      m = {
        protocolVersion: r.u8(),
        roles: r.u8(),
        displays: r.u8(),
        digits: r.u8(),
        flags: r.u8(),
        brightnessLevels: r.u8(),
        textChars: r.u8(),
        icons: r.u16(),
        bootId: r.u32(),
        firstUnackedEvent: r.u16(),
        vendor: r.str(16),
        model: r.str(16),
        serial: r.str(16),
        firmware: r.str(16),
      };
      break;
    case ID.BUTTON:
      m = { event: r.u16(), button: r.u8(), pressed: r.bool(), deviceTimeUs: r.u64() };
      break;
    case ID.DEVICE_HEARTBEAT:
      m = { deviceTimeUs: r.u64(), status: r.u8() };
      break;
    case ID.NAK:
      m = { code: r.u8(), seq: r.u8() };
      break;
    case ID.WELCOME:
      m = { protocolVersion: r.u8(), heartbeatMs: r.u16(), linkTimeoutMs: r.u16() };
      break;
    case ID.ACK:
      m = { event: r.u16() };
      break;
    case ID.DISPLAY:
      m = { left: panel(r), right: panel(r), text: r.str(16), brightness: r.u8() };
      break;
    case ID.LEDS:
      m = { leds: r.u8() };
      break;
    case ID.BEEP:
      m = { durationMs: r.u16(), count: r.u8() };
      break;
    case ID.HOST_HEARTBEAT:
      m = {};
      break;
    default:
      return { unknown: true };
  }
  r.end();
  return m;
}

/// Splits a byte stream at 0x00 and decodes each frame; `onFrame(frame)`
/// with { id, name, seq, fields } or { error } for a refused one.
export class FrameReader {
  constructor(onFrame) {
    this.onFrame = onFrame;
    this.buf = [];
  }
  push(bytes) {
    for (const b of bytes) {
      if (b !== 0) {
        if (this.buf.length <= 130) this.buf.push(b);
        continue;
      }
      const raw = this.buf;
      this.buf = [];
      if (raw.length === 0) continue;
      if (raw.length > 129) {
        this.onFrame({ error: 'Oversize' });
        continue;
      }
      const d = cobsDecode(Uint8Array.from(raw));
      if (!d) {
        this.onFrame({ error: 'Cobs' });
        continue;
      }
      if (d.length < 6) {
        this.onFrame({ error: 'Malformed' });
        continue;
      }
      const body = d.subarray(0, d.length - 4);
      const crc = (d[d.length - 4] | (d[d.length - 3] << 8) | (d[d.length - 2] << 16) | (d[d.length - 1] << 24)) >>> 0;
      if (crc32(body) !== crc) {
        this.onFrame({ error: 'BadCrc' });
        continue;
      }
      const id = body[0];
      try {
        const fields = parsePayload(id, body.subarray(2));
        this.onFrame({ id, name: NAMES[id] ?? `0x${id.toString(16)}`, seq: body[1], fields });
      } catch (e) {
        this.onFrame({ error: 'Malformed', id, detail: e.message });
      }
    }
  }
}
