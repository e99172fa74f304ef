// The USB host side of one emulated Pico: what a PC's USB stack and the
// cdc-acm driver do with a CDC-ACM device. rp2040js emulates the RP2040's
// USB device controller and calls back when the firmware arms an endpoint
// buffer; the package's own USBCDC helper skips the device and string
// descriptors and answers every armed OUT buffer at once (with zero bytes
// when it has none, so the firmware spins on empty packets), so the host
// here is written out: bus reset, GET_DESCRIPTOR (device, configuration,
// string 0 and the three strings), SET_ADDRESS, SET_CONFIGURATION, then
// SET_LINE_CODING and SET_CONTROL_LINE_STATE (DTR, RTS) as the cdc-acm
// driver sends when a program opens the tty. Bulk OUT data waits until
// there is some.

const GET_DESCRIPTOR = 6;
const SET_ADDRESS = 5;
const SET_CONFIGURATION = 9;
const CDC_SET_LINE_CODING = 0x20;
const CDC_SET_CONTROL_LINE_STATE = 0x22;
const DESC_DEVICE = 1;
const DESC_CONFIGURATION = 2;
const DESC_STRING = 3;
const DESC_INTERFACE = 4;
const DESC_ENDPOINT = 5;
const EP0_PACKET = 64;
const LANG_EN_US = 0x0409;

function setup(bmRequestType, bRequest, wValue, wIndex, wLength) {
  return Uint8Array.from([
    bmRequestType,
    bRequest,
    wValue & 0xff,
    wValue >> 8,
    wIndex & 0xff,
    wIndex >> 8,
    wLength & 0xff,
    wLength >> 8,
  ]);
}

function utf16le(bytes) {
  let s = '';
  for (let i = 2; i + 1 < bytes.length; i += 2) {
    s += String.fromCharCode(bytes[i] | (bytes[i + 1] << 8));
  }
  return s;
}

/// The bulk endpoints of the CDC data interface (class 0x0A) and the
/// interface classes, from a configuration descriptor.
export function parseConfiguration(bytes) {
  const out = { interfaces: [], bulkIn: -1, bulkOut: -1, maxPower: 0 };
  let data = false;
  if (bytes.length >= 9) {
    out.maxPower = bytes[8] * 2;
  }
  for (let i = 0; i + 1 < bytes.length && bytes[i] >= 2; i += bytes[i]) {
    const type = bytes[i + 1];
    if (type === DESC_INTERFACE) {
      out.interfaces.push({ number: bytes[i + 2], class: bytes[i + 5], subClass: bytes[i + 6] });
      data = bytes[i + 5] === 0x0a;
    } else if (type === DESC_ENDPOINT && data && (bytes[i + 3] & 3) === 2) {
      if (bytes[i + 2] & 0x80) {
        out.bulkIn = bytes[i + 2] & 0x0f;
      } else {
        out.bulkOut = bytes[i + 2] & 0x0f;
      }
    }
  }
  return out;
}

export class UsbHost {
  /// `pico`: the chip (re-attached at each power-on). `onData(bytes)`:
  /// bulk IN data from the device. `onEnumerated(info)`: once per power-on.
  constructor(pico, { onData = () => {}, onEnumerated = () => {} } = {}) {
    this.pico = pico;
    this.onData = onData;
    this.onEnumerated = onEnumerated;
    this.attach();
    pico.onPowerOn.push(() => this.attach());
  }

  attach() {
    const usb = this.pico.rp.usbCtrl;
    this.usb = usb;
    this.patchOutAvailable(usb);
    this.patchInPause(usb);
    this.info = null;
    this.transfers = [];
    this.current = null;
    this.pendingOut = [];
    this.outArmed = 0;
    this.configured = false;
    this.endpoints = { in: -1, out: -1 };
    this.inBytes = 0;
    this.detached = false;
    usb.onUSBEnabled = () => usb.resetDevice();
    usb.onResetReceived = () => {
      if (!this.detached) this.enumerate();
    };
    usb.onEndpointWrite = (ep, buffer) => this.endpointWrite(ep, buffer);
    usb.onEndpointRead = (ep, size) => this.endpointRead(ep, size);
  }

  /// rp2040js clears an OUT buffer's AVAILABLE bit the moment the firmware
  /// sets it, as if a packet had already arrived; on the chip the bit stays
  /// set until the host's packet fills the buffer. embassy-rp's endpoint
  /// read waits for exactly that bit, so with the package as it is every
  /// read returns at once with 64 bytes of stale buffer. Here the bit is
  /// set again after the package's handling and cleared when the host's
  /// data lands (the package's finishRead then marks the buffer FULL).
  patchOutAvailable(usb) {
    const dpram = this.pico.rp.usbDPRAMView;
    const EP0_OUT_BUFFER_CONTROL = 0x84;
    const LAST_BUFFER_CONTROL = 0xfc;
    const AVAILABLE = 1 << 10;
    const updated = usb.DPRAMUpdated.bind(usb);
    usb.DPRAMUpdated = (offset, value) => {
      updated(offset, value);
      const out = offset >= EP0_OUT_BUFFER_CONTROL && offset <= LAST_BUFFER_CONTROL && (offset & 7) === 4;
      if (out && value & AVAILABLE && !usb.hostMode) {
        dpram.setUint32(offset, dpram.getUint32(offset, true) | AVAILABLE, true);
      }
    };
    const finish = usb.finishRead.bind(usb);
    usb.finishRead = (endpoint, buffer) => {
      const offset = EP0_OUT_BUFFER_CONTROL + endpoint * 8;
      dpram.setUint32(offset, dpram.getUint32(offset, true) & ~AVAILABLE, true);
      finish(endpoint, buffer);
    };
  }

  /// rp2040js takes every IN packet the moment it is armed: its host never
  /// NAKs. A real host does while nobody reads the tty (cdc-acm stops
  /// asking for data when the tty layer throttles), and the firmware has a
  /// path for it (a 20 ms write timeout, the frame dropped, a 0x00 before
  /// the next one if part of a frame went out). `reading = false` makes
  /// this host NAK the bulk IN endpoint: the packet stays armed (AVAILABLE
  /// set) until reading resumes.
  patchInPause(usb) {
    const dpram = this.pico.rp.usbDPRAMView;
    const EP0_IN_BUFFER_CONTROL = 0x80;
    const AVAILABLE = 1 << 10;
    this.reading = true;
    this.heldIn = null;
    const updated = usb.DPRAMUpdated;
    usb.DPRAMUpdated = (offset, value) => {
      const isIn = offset > EP0_IN_BUFFER_CONTROL && offset < 0x100 && (offset & 7) === 0;
      const ep = (offset - EP0_IN_BUFFER_CONTROL) >> 3;
      if (isIn && ep === this.endpoints.in && value & AVAILABLE && !this.reading && !usb.hostMode) {
        this.heldIn = offset;
        this.naks = (this.naks || 0) + 1;
        return;
      }
      updated(offset, value);
    };
    this.release = () => {
      const offset = this.heldIn;
      this.heldIn = null;
      if (offset != null) {
        const value = dpram.getUint32(offset, true);
        if (value & AVAILABLE) updated(offset, value);
      }
    };
  }

  /// Whether the host reads the bulk IN endpoint (false: it NAKs).
  setReading(on) {
    this.reading = on;
    if (on) this.release();
  }

  enumerate() {
    const info = { strings: {} };
    const get = (type, index, length, lang = 0) =>
      setup(0x80, GET_DESCRIPTOR, (type << 8) | index, lang, length);
    this.control(get(DESC_DEVICE, 0, 18), null, (d) => {
      const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
      Object.assign(info, {
        device: d,
        bcdUSB: v.getUint16(2, true),
        deviceClass: d[4],
        deviceSubClass: d[5],
        deviceProtocol: d[6],
        maxPacket0: d[7],
        idVendor: v.getUint16(8, true),
        idProduct: v.getUint16(10, true),
        bcdDevice: v.getUint16(12, true),
        iManufacturer: d[14],
        iProduct: d[15],
        iSerialNumber: d[16],
        configurations: d[17],
      });
    });
    this.control(setup(0x00, SET_ADDRESS, 5, 0, 0), null, () => {});
    this.control(get(DESC_CONFIGURATION, 0, 9), null, (d) => {
      const total = d[2] | (d[3] << 8);
      this.control(get(DESC_CONFIGURATION, 0, total), null, (full) => {
        info.configuration = full;
        Object.assign(info, parseConfiguration(full));
        this.endpoints = { in: info.bulkIn, out: info.bulkOut };
      }, true);
    });
    this.control(get(DESC_STRING, 0, 255), null, (d) => {
      info.languages = [];
      for (let i = 2; i + 1 < d.length; i += 2) info.languages.push(d[i] | (d[i + 1] << 8));
      for (const [field, name] of [
        ['iManufacturer', 'manufacturer'],
        ['iProduct', 'product'],
        ['iSerialNumber', 'serial'],
      ]) {
        if (info[field]) {
          this.control(get(DESC_STRING, info[field], 255, LANG_EN_US), null, (s) => {
            info.strings[name] = utf16le(s);
          }, true);
        }
      }
      this.control(setup(0x00, SET_CONFIGURATION, 1, 0, 0), null, () => {
        this.configured = true;
      }, true);
      // What cdc-acm sends when the tty is opened: 115200 8N1, then DTR+RTS.
      const coding = Uint8Array.from([0x00, 0xc2, 0x01, 0x00, 0, 0, 8]);
      this.control(setup(0x21, CDC_SET_LINE_CODING, 0, 0, 7), coding, () => {}, true);
      this.control(setup(0x21, CDC_SET_CONTROL_LINE_STATE, 3, 0, 0), null, () => {
        info.atMicros = this.pico.micros;
        this.info = info;
        this.onEnumerated(info);
        this.flushOut();
      }, true);
    });
  }

  /// Queues a control transfer (`front`: before the queued ones, for
  /// requests that depend on an answer just read).
  control(setupPacket, dataOut, done, front = false) {
    const t = { setup: setupPacket, dataOut, done, data: [], length: setupPacket[6] | (setupPacket[7] << 8) };
    t.in = !!(setupPacket[0] & 0x80);
    if (front) {
      // After the other front-queued ones of the same answer, in order.
      const at = this.frontAt ?? 0;
      this.transfers.splice(at, 0, t);
      this.frontAt = at + 1;
    } else {
      this.transfers.push(t);
    }
    if (!this.current) {
      this.next();
    }
  }

  next() {
    this.frontAt = 0;
    this.current = this.transfers.shift() || null;
    if (this.current) {
      this.current.stage = 'data';
      this.usb.sendSetupPacket(this.current.setup);
    }
  }

  finish() {
    const t = this.current;
    this.current = null;
    this.frontAt = 0;
    t.done(Uint8Array.from(t.data));
    if (!this.current) {
      this.next();
    }
  }

  /// The zero-length OUT that ends a control read. The next SETUP waits
  /// until the controller has delivered it (rp2040js completes an OUT
  /// `readDelayMicroseconds` later; a SETUP sent at once would reach the
  /// firmware before the status stage of the transfer before it).
  statusOut() {
    const t = this.current;
    if (t.statusSent) {
      return;
    }
    t.statusSent = true;
    this.usb.endpointReadDone(0, new Uint8Array(0));
    const settle = (this.usb.readDelayMicroseconds + 1) * 1000;
    this.pico.at(this.pico.nanos + settle, () => {
      if (this.current === t) {
        this.finish();
      }
    });
  }

  endpointWrite(ep, buffer) {
    if (ep === 0) {
      const t = this.current;
      if (!t) {
        return;
      }
      if (t.in && t.stage === 'data') {
        t.data.push(...buffer);
        if (buffer.length < EP0_PACKET || t.data.length >= t.length) {
          t.stage = 'status';
          if (t.statusArmed) {
            this.statusOut();
          }
        }
      } else if (!t.in && buffer.length === 0) {
        // The device's zero-length status packet ends an OUT request.
        this.finish();
      }
      return;
    }
    // Data from the moment the configuration is set (the firmware sends
    // HELLO then); on a PC it would wait in the device until the tty's
    // reader starts, here it goes on to the bridge, which holds it.
    if (this.configured && ep === this.endpoints.in) {
      this.inBytes += buffer.length;
      this.onData(Uint8Array.from(buffer));
    }
  }

  endpointRead(ep, size) {
    if (ep === 0) {
      const t = this.current;
      if (!t) {
        return;
      }
      if (t.in) {
        // The status stage: a zero-length OUT, once the data is in.
        if (t.stage === 'status') {
          this.statusOut();
        } else {
          t.statusArmed = true;
        }
      } else if (t.dataOut && !t.sent) {
        t.sent = true;
        this.usb.endpointReadDone(0, t.dataOut);
      }
      return;
    }
    // The firmware arms its bulk OUT endpoint when configured, before the
    // host's last set-up requests: remember it whenever it comes.
    if (ep === this.endpoints.out) {
      this.outArmed = size;
      this.flushOut();
    }
  }

  /// The cable pulled from a unit that keeps its power (batteries): no
  /// host on the bus, so every IN packet waits (NAK) and nothing comes.
  /// rp2040js has no bus-idle suspend, so the firmware notices only at
  /// `reattach()`, by the bus reset of the new enumeration.
  detach() {
    this.detached = true;
    this.setReading(false);
    this.pendingOut = [];
  }

  /// The cable back in: a bus reset and a new enumeration, as a PC does
  /// on a plug. The packet the firmware had armed is lost with the reset.
  reattach() {
    this.detached = false;
    this.heldIn = null;
    this.reading = true;
    this.transfers = [];
    this.current = null;
    this.pendingOut = [];
    this.outArmed = 0;
    this.configured = false;
    this.info = null;
    this.endpoints = { in: -1, out: -1 };
    this.usb.resetDevice();
  }

  /// Bytes from the host program (the daemon) to the device.
  write(bytes) {
    if (this.detached) return;
    this.pendingOut.push(...bytes);
    this.flushOut();
  }

  flushOut() {
    if (!this.configured || this.outArmed === 0 || this.pendingOut.length === 0) {
      return;
    }
    const n = Math.min(this.outArmed, this.pendingOut.length);
    const packet = Uint8Array.from(this.pendingOut.splice(0, n));
    this.outArmed = 0;
    this.usb.endpointReadDone(this.endpoints.out, packet);
  }
}
